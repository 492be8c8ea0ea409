// @vitest-environment jsdom
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { renderWorkbench } from '../../test-support/render-workbench.js';

vi.mock('../../charts/echarts-core.js', async () => {
  const { recordingChart } = await import('../../test-support/chart-mock.js');
  return { initChart: () => recordingChart() };
});

afterEach(cleanup);

describe('the result of a run the host could not save', () => {
  it('says so with what to do, and still offers JSON and CSV export by the live run id', async () => {
    const view = await renderWorkbench({ unwritableDataFolder: true });
    fireEvent.change(screen.getByTestId('max-new-tokens-input'), { target: { value: '10' } });
    fireEvent.click(screen.getByTestId('run-button'));
    await view.settle();
    expect(screen.getByTestId('run-status').textContent).toBe('Done');
    const runId = view.store.getState().run.runId!;
    expect(screen.getByTestId('result-summary').textContent).toContain('not saved');
    expect(screen.queryByTestId('result-run-id')).toBeNull();
    expect(screen.getByTestId('run-not-saved-message').textContent).toMatch(new RegExp(`could not be saved to the history: .*can still be exported \\(run ${runId}\\)`));
    expect(screen.getByTestId('run-not-saved-fix').textContent).toContain('KVSCOPE_DATA_DIR');

    const exported = vi.spyOn(view.api, 'exportRun');
    fireEvent.click(screen.getByTestId('export-csv'));
    fireEvent.click(screen.getByTestId('export-json'));
    await act(async () => view.settle());
    expect(exported.mock.calls).toEqual([[runId, 'csv'], [runId, 'json']]);
    expect(view.store.getState().notices.map((notice) => notice.title)).toEqual(['Exported CSV', 'Exported JSON']);
  });

  it('a saved run shows where it was saved and no such notice', async () => {
    const view = await renderWorkbench();
    fireEvent.change(screen.getByTestId('max-new-tokens-input'), { target: { value: '10' } });
    fireEvent.click(screen.getByTestId('run-button'));
    await view.settle();
    expect(screen.getByTestId('result-run-id').textContent).toBe(view.store.getState().run.savedRunId);
    expect(screen.queryByTestId('run-not-saved')).toBeNull();
    expect(screen.getByTestId('export-csv')).toBeTruthy();
  });
});
