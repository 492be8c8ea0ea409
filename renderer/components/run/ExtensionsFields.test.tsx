// @vitest-environment jsdom
import { cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { renderWorkbench } from '../../test-support/render-workbench.js';

vi.mock('../../charts/echarts-core.js', async () => {
  const { recordingChart } = await import('../../test-support/chart-mock.js');
  return { initChart: () => recordingChart() };
});

afterEach(cleanup);

describe('the run panel\'s kvscope extensions group', () => {
  it('starts collapsed with nothing active, and the form holds transformers\' settings exactly', async () => {
    const view = await renderWorkbench();
    const group = screen.getByTestId('extensions-fields') as HTMLDetailsElement;
    expect(group.open).toBe(false);
    expect(group.querySelector('summary')!.textContent).toBe('kvscope extensions (beyond transformers) (none active)');
    expect(view.store.getState().form.quantization.extensions).toBeUndefined();
  });

  it('names active extensions, checks them in the preflight with transformers\' message, and drops knobs set back to off', async () => {
    const view = await renderWorkbench();
    fireEvent.change(screen.getByTestId('nbits-key-select'), { target: { value: '8' } });
    await view.settle();
    expect(screen.getByTestId('extensions-active').textContent).toBe('(K and V bits apart)');
    // the run check refuses before Run, with transformers' message first
    const refusal = screen.getByTestId('preflight-refusal');
    expect(refusal.textContent).toContain('`nbits` for `quanto` backend has to be one of [`2`, `4`] but got 8');
    expect(refusal.textContent).toContain('kvscope extension --nbits-key');

    fireEvent.change(screen.getByTestId('nbits-key-select'), { target: { value: '' } });
    fireEvent.change(screen.getByTestId('sink-tokens-input'), { target: { value: '4' } });
    fireEvent.change(screen.getByTestId('rotation-select'), { target: { value: 'hadamard' } });
    await view.settle();
    expect(view.store.getState().form.quantization.extensions).toEqual({ sinkTokens: 4, rotation: 'hadamard' });
    expect(screen.getByTestId('extensions-active').textContent).toBe('(attention sinks, rotation)');
    expect(screen.getByTestId('preflight-status').textContent).toMatch(/^OK/);

    fireEvent.change(screen.getByTestId('sink-tokens-input'), { target: { value: '0' } });
    fireEvent.change(screen.getByTestId('rotation-select'), { target: { value: '' } });
    await view.settle();
    expect(view.store.getState().form.quantization.extensions).toBeUndefined();
  });

  it('shows the extensions\' bytes in the memory what-if: sink rows are full precision', async () => {
    const view = await renderWorkbench();
    fireEvent.change(screen.getByTestId('whatif-context-input'), { target: { value: '1024' } });
    await view.settle();
    const before = screen.getByTestId('whatif-total').textContent;
    fireEvent.change(screen.getByTestId('sink-tokens-input'), { target: { value: '64' } });
    await view.settle();
    expect(screen.getByTestId('whatif-total').textContent).not.toBe(before);
  });
});
