import type * as EchartsCore from './echarts-core.js';

let loading: Promise<typeof EchartsCore> | undefined;

/**
 * ECharts in its own chunk, fetched when the first chart mounts: the window opens without it
 * (about half of the bundle), and runs start while it loads.
 */
export function loadEcharts(): Promise<typeof EchartsCore> {
  loading ??= import('./echarts-core.js');
  return loading;
}
