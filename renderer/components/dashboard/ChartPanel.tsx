import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import type { ChartSpec } from '../../charts/chart-spec.js';
import type { ChartInstance } from '../../charts/echarts-core.js';
import type { ChartScale } from '../../charts/heat-scale.js';
import { loadEcharts } from '../../charts/load-echarts.js';
import type { RunBuffers } from '../../controller/live-buffers.js';
import type { ChartIdentity } from '../../export/chart-png.js';
import { useChartTheme, useServices } from '../../services.js';
import { FigureExports } from '../common/FigureExports.js';

interface ChartPanelProps {
  readonly spec: ChartSpec;
  readonly buffers: RunBuffers;
  /** a compared run: overlays draw it, heatmaps share their colour range with it */
  readonly other?: RunBuffers;
  /** the runs compared after `buffers` (B, C, …): comparison overlays draw each */
  readonly compared?: readonly RunBuffers[];
  /** shown over the chart instead of data (e.g. the reference lane was off) */
  readonly emptyMessage?: string | null;
  /** what the exported PNG says it shows (its file name starts with the run id) */
  readonly identity: ChartIdentity;
  readonly wide?: boolean;
  readonly tall?: boolean;
}

/** A redraw that took d ms is followed by at least 20·d ms without one (ChartPanel's frame task). */
const REDRAW_COST_FACTOR = 20;

/**
 * One ECharts chart bound to a run's buffers. React renders the frame once; after that the chart
 * pulls data on animation frames through the shared FrameLoop whenever the buffers' version moved,
 * at most every `spec.minIntervalMs` (STYLE.md §11). A metrics batch causes no React render.
 */
export function ChartPanel({ spec, buffers, other, compared, emptyMessage = null, identity, wide = false, tall = false }: ChartPanelProps): ReactNode {
  const { frames } = useServices();
  const theme = useChartTheme();
  const scales = spec.scales ?? ['linear'];
  const [scale, setScale] = useState<ChartScale>(scales[0]!);
  const host = useRef<HTMLDivElement>(null);
  const chart = useRef<ChartInstance | null>(null);
  const titleId = useId();

  useEffect(() => {
    const element = host.current;
    if (element === null) return;
    let disposed = false;
    let cleanup = (): void => {};
    void loadEcharts().then(({ initChart }) => {
      if (disposed) return;
      cleanup = bindChart(element, initChart);
    });
    /**
     * The chart is created on a frame of the shared loop too, so a dashboard of eight charts
     * initializes over several frames instead of freezing one.
     */
    const bindChart = (target: HTMLDivElement, initChart: (element: HTMLElement) => ChartInstance): (() => void) => {
      const drawer = spec.create();
      const context = { buffers, theme, scale, ...(other !== undefined ? { other } : {}), ...(compared !== undefined ? { compared } : {}) };
      let instance: ChartInstance | null = null;
      let drawnVersion = -1;
      let lastDrawMs = -Infinity;
      /** the wait before the next redraw: the spec's, or longer when a redraw costs much (see below) */
      let intervalMs = spec.minIntervalMs;
      const draw = (chart: ChartInstance): void => {
        drawnVersion = buffers.metrics.version;
        const started = performance.now();
        const option = drawer.update(context);
        if (option !== null) chart.setOption(option);
        // A chart whose redraw is slow (a loaded machine, a large run) waits longer before the next, so
        // that no chart takes more than a twentieth of the main thread while a run streams: the nine
        // charts together leave at least half of it to the stream, the tiles and the text.
        intervalMs = Math.max(spec.minIntervalMs, REDRAW_COST_FACTOR * (performance.now() - started));
        target.dataset['points'] = String(drawer.points());
        const words = drawer.describe?.();
        if (words !== undefined && words !== target.dataset['legend']) {
          target.dataset['legend'] = words;
          target.setAttribute('aria-description', words);
        }
        target.dataset['version'] = String(drawnVersion);
      };
      // Charts scrolled out of view skip their redraws and catch up when they come back.
      let visible = true;
      const visibility = typeof IntersectionObserver === 'undefined' ? null : new IntersectionObserver((entries) => {
        visible = entries.some((entry) => entry.isIntersecting);
      });
      visibility?.observe(target);
      // ResizeObserver reports every element once when observed: a chart just made at that size is not
      // drawn again for it (a second full render in the frame that made it)
      const resize = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(() => {
        if (instance !== null && (instance.getWidth() !== target.clientWidth || instance.getHeight() !== target.clientHeight)) instance.resize();
      });
      resize?.observe(target);
      const stop = frames.add({
        run(now) {
          // Making the chart and drawing its data are two frames' work: a dashboard's first frame after
          // Run (the React commit, then the largest chart's first render) stays short.
          if (instance === null) {
            instance = initChart(target);
            chart.current = instance;
            instance.setOption(drawer.setup(context), { notMerge: true });
            return true;
          }
          if (drawnVersion === -1) {
            lastDrawMs = now;
            draw(instance);
            return true;
          }
          if (!visible || buffers.metrics.version === drawnVersion || now - lastDrawMs < intervalMs) return false;
          lastDrawMs = now;
          draw(instance);
          return true;
        },
      });
      return () => {
        stop();
        visibility?.disconnect();
        resize?.disconnect();
        instance?.dispose();
        chart.current = null;
      };
    };
    return () => {
      disposed = true;
      cleanup();
    };
  }, [spec, buffers, other, compared, theme, frames, scale]);

  return (
    <figure className={`chart-panel${wide ? ' wide' : ''}${tall ? ' tall' : ''}`} aria-labelledby={titleId} data-testid={`chart-panel-${spec.id}`}>
      <figcaption>
        <span id={titleId} className="chart-title">{spec.title}</span>
        <span className="chart-actions">
          {scales.length > 1 && (
            <span className="segmented mini" role="radiogroup" aria-label={`${spec.title}: value scale`} data-testid={`scale-${spec.id}`}>
              {scales.map((choice) => (
                <label key={choice} className={choice === scale ? 'selected' : undefined}>
                  <input type="radio" name={`${titleId}-scale`} checked={choice === scale} onChange={() => setScale(choice)} data-testid={`scale-${spec.id}-${choice}`} />
                  {choice}
                </label>
              ))}
            </span>
          )}
          <FigureExports chart={() => chart.current} title={spec.title} identity={identity} fileStem={`${identity.runId}-${spec.id}`} disabled={emptyMessage !== null} testId={spec.id} />
        </span>
      </figcaption>
      <p className="chart-description">{spec.description}</p>
      <div className="chart-host-wrap">
        <div ref={host} className="chart-host" role="img" aria-label={spec.description} data-testid={`chart-${spec.id}`} data-scale={scale} />
        {emptyMessage !== null && <div className="chart-empty" data-testid={`chart-empty-${spec.id}`}>{emptyMessage}</div>}
      </div>
    </figure>
  );
}
