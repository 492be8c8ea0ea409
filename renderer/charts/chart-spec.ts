import type { RunBuffers } from '../controller/live-buffers.js';
import type { ChartTheme } from './chart-theme.js';
import type { ChartOption } from './echarts-core.js';
import type { ChartScale } from './heat-scale.js';

/** What a chart reads: one run's buffers (or two, to compare) and the colours of the current scheme. */
export interface ChartContext {
  readonly buffers: RunBuffers;
  readonly theme: ChartTheme;
  /** the second run of a comparison (overlays draw it; heatmaps share their colour range with it) */
  readonly other?: RunBuffers;
  /** the compared runs after `buffers` (B, C, …; up to 7): comparison overlays draw each of them */
  readonly compared?: readonly RunBuffers[];
  /** the value axis the reader chose, for charts that offer more than one (ChartSpec.scales) */
  readonly scale: ChartScale;
}

/**
 * One chart: `setup` gives the whole option once (axes fixed where the run's length is known), and
 * `update` the data only, called on animation frames when the buffers moved (STYLE.md §11).
 * `points` is how many data points the last update drew (e2e tests read it).
 */
export interface ChartDrawer {
  setup(context: ChartContext): ChartOption;
  update(context: ChartContext): ChartOption | null;
  points(): number;
  /** what the chart's legend or colour scale says now in words (its aria description; e2e reads it) */
  describe?(): string;
}

export interface ChartSpec {
  readonly id: string;
  readonly title: string;
  /** one sentence: what is plotted, in which unit, against which baseline (also the chart's aria-label) */
  readonly description: string;
  /** the shortest time between two redraws while streaming */
  readonly minIntervalMs: number;
  /** the value scales a reader may switch between, the first being the default; absent: linear only */
  readonly scales?: readonly ChartScale[];
  create(): ChartDrawer;
}
