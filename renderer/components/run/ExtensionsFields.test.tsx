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

  it('chooses a runtime\'s KV format for keys and values apart; the preflight says what the runtime refuses before Run', async () => {
    const view = await renderWorkbench();
    const geometry = view.store.getState().model.summary?.config?.geometry;
    expect(geometry?.headDim).toBe(64);
    fireEvent.change(screen.getByTestId('kv-format-key-select'), { target: { value: 'mlx:4bit-g128' } });
    await view.settle();
    // picking the keys' format alone sets the values' to the same (both are needed)
    expect(view.store.getState().form.quantization.extensions).toEqual({ kvFormatKey: 'mlx:4bit-g128', kvFormatValue: 'mlx:4bit-g128' });
    expect(screen.getByTestId('extensions-active').textContent).toBe('(runtime KV format (write-once))');
    // head_dim 64 is no multiple of MLX's group of 128: refused with mlx's own words, before Run
    const refusal = screen.getByTestId('preflight-refusal');
    expect(refusal.textContent).toContain('The last dimension of the matrix needs to be divisible by the quantization group size 128');

    fireEvent.change(screen.getByTestId('kv-format-key-select'), { target: { value: 'vllm:fp8_e4m3' } });
    fireEvent.change(screen.getByTestId('kv-format-value-select'), { target: { value: 'vllm:fp8_e5m2' } });
    await view.settle();
    expect(view.store.getState().form.quantization.extensions).toEqual({ kvFormatKey: 'vllm:fp8_e4m3', kvFormatValue: 'vllm:fp8_e5m2' });
    expect(screen.getByTestId('preflight-status').textContent).toMatch(/^OK/);
    expect(screen.getByTestId('extensions-list').textContent).toContain('K vllm:fp8_e4m3, V vllm:fp8_e5m2');

    fireEvent.change(screen.getByTestId('kv-format-value-select'), { target: { value: '' } });
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
