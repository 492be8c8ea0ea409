import type { ReactNode } from 'react';
import { KEY_ERROR_HEATMAP, KV_LAYERS_CHART, KV_MEMORY_CHART, LATEST_ERROR_CHART, REFERENCE_CHART, SPEED_CHART, STEP_TIME_CHART, VALUE_ERROR_HEATMAP } from '../../charts/run-charts.js';
import { PROCESS_MEMORY_CHART } from '../../charts/process-memory-chart.js';
import type { RunBuffers } from '../../controller/live-buffers.js';
import type { ChartIdentity } from '../../export/chart-png.js';
import { ChartPanel } from './ChartPanel.js';
import { StatTiles } from './StatTiles.js';

interface RunDashboardProps {
  readonly buffers: RunBuffers;
  readonly referenceOn: boolean;
  readonly quantized: boolean;
  /** what exported charts say they show */
  readonly identity: ChartIdentity;
  /** the run shown beside this one (side-by-side comparison): the heatmaps share their colour range with it */
  readonly comparedWith?: RunBuffers;
}

/** Headline figures and every chart of one run (live or saved): memory, error, speed, fidelity. */
export function RunDashboard({ buffers, referenceOn, quantized, identity, comparedWith }: RunDashboardProps): ReactNode {
  const noQuantization = quantized ? null : 'Dynamic cache: nothing is quantized, so there is no quantization error.';
  const shared = comparedWith === undefined ? {} : { other: comparedWith };
  return (
    <div className="dashboard" data-testid="run-dashboard">
      <StatTiles buffers={buffers} />
      <div className="chart-grid">
        <ChartPanel spec={KV_MEMORY_CHART} buffers={buffers} identity={identity} wide tall />
        <ChartPanel spec={PROCESS_MEMORY_CHART} buffers={buffers} identity={identity} wide />
        <ChartPanel spec={KV_LAYERS_CHART} buffers={buffers} identity={identity} />
        <ChartPanel spec={LATEST_ERROR_CHART} buffers={buffers} identity={identity} emptyMessage={noQuantization} />
        <ChartPanel spec={KEY_ERROR_HEATMAP} buffers={buffers} identity={identity} emptyMessage={noQuantization} {...shared} />
        <ChartPanel spec={VALUE_ERROR_HEATMAP} buffers={buffers} identity={identity} emptyMessage={noQuantization} {...shared} />
        <ChartPanel spec={SPEED_CHART} buffers={buffers} identity={identity} />
        <ChartPanel spec={STEP_TIME_CHART} buffers={buffers} identity={identity} />
        <ChartPanel spec={REFERENCE_CHART} buffers={buffers} identity={identity} wide
          emptyMessage={referenceOn ? null : 'Reference lane off: turn it on in the run panel to see KL and top-1 agreement per step.'} />
      </div>
    </div>
  );
}
