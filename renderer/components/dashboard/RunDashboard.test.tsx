// @vitest-environment jsdom
import { act, cleanup, render, screen } from '@testing-library/react';
import { Profiler } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../../app/cache/cache-config.js';
import type { RunSettings } from '../../../app/engine/types.js';
import { readChartTheme } from '../../charts/chart-theme.js';
import { loadEcharts } from '../../charts/load-echarts.js';
import { buffersForRun } from '../../controller/live-buffers.js';
import { WorkbenchController } from '../../controller/workbench-controller.js';
import { FrameLoop } from '../../metrics/frame-loop.js';
import { ServicesProvider } from '../../services.js';
import { createWorkbenchStore } from '../../store/workbench-store.js';
import { createdCharts } from '../../test-support/chart-mock.js';
import { fakeModel } from '../../test-support/fake-models.js';
import { FakeRunSimulation } from '../../test-support/fake-run.js';
import { createFakeWorkbenchApi } from '../../test-support/fake-workbench-api.js';
import { ManualFrames } from '../../test-support/render-workbench.js';
import { RunDashboard } from './RunDashboard.js';
import { TextPanel } from './TextPanel.js';

vi.mock('../../charts/echarts-core.js', async () => {
  const { recordingChart } = await import('../../test-support/chart-mock.js');
  return { initChart: () => recordingChart() };
});

afterEach(cleanup);

describe('RunDashboard', () => {
  it('is not re-rendered by metrics batches: 10,000 steps × 32 layers reach the charts through frames only', async () => {
    const settings: RunSettings = {
      model: '/fake/models/mistral-7b-v0.3', executionProvider: 'cpu', cacheMode: 'quantized', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS,
      prompt: 'Once upon a time', maxNewTokens: 10_000, sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 1 }, reference: true,
    };
    const model = fakeModel({ kind: 'folder', path: settings.model })!;
    const api = createFakeWorkbenchApi();
    const store = createWorkbenchStore('browser');
    const clock = new ManualFrames();
    const frames = new FrameLoop(1000, clock);
    const controller = new WorkbenchController(api, store);
    const summary = { source: { kind: 'folder' as const, path: settings.model }, displayName: 'm', folder: settings.model, onnxFiles: [], onnxFile: null, config: model.config, kvDtype: 'float16' as const, chatTemplate: null, diagnostics: [], ok: true };
    const buffers = buffersForRun(settings, summary);
    const onRender = vi.fn();
    render(
      <ServicesProvider services={{ store, controller, frames }} theme={readChartTheme()}>
        <Profiler id="dashboard" onRender={onRender}>
          <RunDashboard buffers={buffers} referenceOn quantized identity={{ runId: 'run', model: 'mistral-7b-v0.3', settings: 'quanto 4-bit' }} />
          <TextPanel buffers={buffers} referenceOn finished={false} />
        </Profiler>
      </ServicesProvider>,
    );
    await act(async () => {
      await loadEcharts();
    });
    act(() => clock.tick(16)); // charts are created on the first frame
    const rendersAfterMount = onRender.mock.calls.length;
    const charts = createdCharts.filter((chart) => !chart.disposed);
    expect(charts).toHaveLength(9);
    const drawsBefore = charts.map((chart) => chart.options.length);

    const simulation = new FakeRunSimulation(model.config, 'float16', settings, 1);
    let batches = 0;
    while (!simulation.done) {
      const steps = [];
      let text = '';
      const ids: number[] = [];
      for (let i = 0; i < 50 && !simulation.done; i++) {
        const { metrics, delta } = simulation.next();
        steps.push(metrics);
        text += delta;
        ids.push(metrics.tokenId);
      }
      buffers.metrics.append(steps);
      buffers.text.append(text, ids);
      batches++;
      if (batches % 20 === 0) act(() => clock.tick(1000)); // a frame now and then, as the browser would
    }
    act(() => {
      for (let i = 0; i < 10; i++) clock.tick(1000);
    });

    expect(batches).toBe(200);
    expect(onRender.mock.calls.length).toBe(rendersAfterMount);
    charts.forEach((chart, index) => expect(chart.options.length).toBeGreaterThan(drawsBefore[index]!));
    expect(screen.getByTestId('stat-steps').textContent).toBe('10000');
    expect(screen.getByTestId('stat-flushes').textContent).toBe(String(simulation.result('max-new-tokens', { folder: '', onnxFile: '' }, []).flushCounts[0]));
    // at most 1,000 points per line reach ECharts, whatever the run's length
    expect(Number(screen.getByTestId('chart-kv-memory').dataset['points'])).toBe(1_000);
    expect(screen.getByTestId('text-token-count').textContent).toBe('10000 tokens');
    expect(screen.getByTestId('generated-text').querySelectorAll('span.disagree, span.disagree-batch').length).toBeGreaterThan(0);
  });
});
