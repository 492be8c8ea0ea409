// @vitest-environment jsdom
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RUN_CSV_COLUMNS } from '../../../app/record/run-record-csv.js';
import { renderWorkbench } from '../../test-support/render-workbench.js';

vi.mock('../../charts/echarts-core.js', async () => {
  const { recordingChart } = await import('../../test-support/chart-mock.js');
  return { initChart: () => recordingChart() };
});

afterEach(cleanup);

const K4V2_SINKS_4 = 'K and V bits apart (K 4 bits, V 2 bits); attention sinks (first 4 tokens of each layer in full precision, never re-quantized)';

describe('the kvscope extensions a run used are named wherever the run is shown', () => {
  it('live header, saved-run view and CSV export name K4V2 and 4 sinks; a transformers run shows no badge', async () => {
    const view = await renderWorkbench();
    fireEvent.change(screen.getByTestId('max-new-tokens-input'), { target: { value: '12' } });
    fireEvent.click(screen.getByTestId('run-button'));
    await view.settle();
    expect(screen.getByTestId('run-status').textContent).toBe('Done');
    expect(screen.queryByTestId('live-extensions')).toBeNull();

    act(() => view.store.getState().updateQuantization({ nbits: 2, extensions: { nbitsKey: 4, sinkTokens: 4 } }));
    await view.settle();
    const first = view.store.getState().run.serial;
    fireEvent.click(screen.getByTestId('run-button'));
    await view.settle();
    expect(view.store.getState().run.serial).toBe(first + 1);
    expect(screen.getByTestId('run-status').textContent).toBe('Done');
    const live = screen.getByTestId('live-extensions');
    expect(live.textContent).toBe(`kvscope extensions (beyond transformers) ${K4V2_SINKS_4}`);
    expect(live.dataset['extensions']).toBe('kv-bits-apart attention-sinks');

    const runId = view.store.getState().run.savedRunId!;
    await act(async () => view.controller.openSavedRun(runId));
    expect(screen.getByTestId('saved-view').dataset['runId']).toBe(runId);
    expect(screen.getByTestId('saved-extensions').textContent).toBe(`kvscope extensions (beyond transformers) ${K4V2_SINKS_4}`);

    const csv = (await view.api.exportRun(runId, 'csv')).content.split('\r\n');
    const column = RUN_CSV_COLUMNS.indexOf('kvscope_extensions');
    expect(csv[0]!.split(',')[column]).toBe('kvscope_extensions');
    expect(csv[1]!.endsWith(`,"${K4V2_SINKS_4}",host`)).toBe(true);

    const plain = view.api.savedRecords.find((record) => record.id !== runId)!;
    await act(async () => view.controller.openSavedRun(plain.id));
    expect(screen.getByTestId('saved-view').dataset['runId']).toBe(plain.id);
    expect(screen.queryByTestId('saved-extensions')).toBeNull();
  });
});
