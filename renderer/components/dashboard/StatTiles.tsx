import { useRef, type ReactNode } from 'react';
import { dtypeLabel } from '../../charts/run-charts.js';
import type { RunBuffers } from '../../controller/live-buffers.js';
import { formatBytes, formatCompression, formatError, formatPercent, formatTokensPerSecond, significant } from '../../format/units.js';
import { useFrameTask } from '../../metrics/use-frame-task.js';

interface Tile {
  readonly key: string;
  readonly label: string;
  readonly value: (buffers: RunBuffers) => string;
  readonly detail: (buffers: RunBuffers) => string;
}

const last = (b: RunBuffers, column: Parameters<RunBuffers['metrics']['steps']['last']>[0]): number => b.metrics.steps.last(column);

/** The dynamic cache this cache replaces: the graph's own KV dtype. */
function dtypeBaseline(b: RunBuffers): number {
  return last(b, b.metrics.kvBytesPerValue === 2 ? 'fp16BaselineBytes' : 'fp32BaselineBytes');
}

const TILES: readonly Tile[] = [
  {
    key: 'steps', label: 'Steps',
    value: (b) => `${b.metrics.stepCount}`,
    detail: (b) => `of ${b.metrics.expectedSteps} · context ${finite(last(b, 'seqLength'))} tokens`,
  },
  {
    key: 'kv', label: 'KV stored',
    value: (b) => formatBytes(last(b, 'totalBytes')),
    detail: (b) => `codes ${formatBytes(last(b, 'codeBytes'))} · scale/zero ${formatBytes(last(b, 'metadataBytes'))} · full precision ${formatBytes(last(b, 'fullPrecisionBytes'))}`,
  },
  {
    key: 'ratio', label: 'vs the cache it replaces',
    value: (b) => formatCompression(dtypeBaseline(b), last(b, 'totalBytes')),
    detail: (b) => {
      const baseline = dtypeBaseline(b);
      if (!(baseline > 0)) return '–';
      return `than the ${dtypeLabel(b.metrics)} dynamic cache of the same tokens (${formatBytes(baseline)}) · ${significant((8 * last(b, 'totalBytes')) / (last(b, 'fp16BaselineBytes') / 2), 3)} bits/value`;
    },
  },
  {
    key: 'ratio-fp16', label: 'vs fp16',
    value: (b) => formatCompression(last(b, 'fp16BaselineBytes'), last(b, 'totalBytes')),
    detail: (b) => `than an fp16 dynamic cache of the same tokens (${formatBytes(last(b, 'fp16BaselineBytes'))})`,
  },
  {
    key: 'fed', label: 'Fed to the model',
    value: (b) => formatBytes(last(b, 'materializedKvBytes')),
    detail: () => 'KV inputs of the last step: the history dequantized, plus the residual, in the graph\'s dtype',
  },
  {
    key: 'working', label: 'kvscope buffers',
    value: (b) => formatBytes(last(b, 'workingBytes')),
    detail: () => 'JavaScript arrays the cache holds (history, dequantized stores; capacity included)',
  },
  {
    key: 'rss', label: 'Process memory',
    value: (b) => formatBytes(last(b, 'rssBytes')),
    detail: (b) => `resident set of the generation process · V8 external ${formatBytes(last(b, 'externalBytes'))} · array buffers ${formatBytes(last(b, 'arrayBuffersBytes'))}`,
  },
  {
    key: 'flushes', label: 'Flushes per layer',
    value: (b) => String(b.metrics.flushesPerLayer() ?? 0),
    detail: (b) => `${b.metrics.totalFlushes()} in all layers`,
  },
  {
    key: 'speed', label: 'Decode speed',
    value: (b) => formatTokensPerSecond(last(b, 'tokensPerSecond')),
    detail: (b) => `last step ${significant(last(b, 'totalMs'), 3)} ms`,
  },
  {
    key: 'kl', label: 'Mean KL',
    value: (b) => {
      const reference = b.metrics.reference();
      return reference === null ? '–' : `${formatError(reference.meanKl)} nats`;
    },
    detail: (b) => {
      const reference = b.metrics.reference();
      return reference === null ? 'reference lane off' : `max ${formatError(reference.maxKl)} nats`;
    },
  },
  {
    key: 'top1', label: 'Top-1 agreement',
    value: (b) => {
      const reference = b.metrics.reference();
      return reference === null ? '–' : formatPercent(reference.top1Agreement);
    },
    detail: (b) => {
      const reference = b.metrics.reference();
      if (reference === null) return 'reference lane off';
      return reference.firstDisagreement === null ? 'no divergence' : `first differs at step ${reference.firstDisagreement}`;
    },
  },
];

function finite(value: number): string {
  return Number.isFinite(value) ? String(value) : '–';
}

/**
 * The run's headline figures with units, baselines and the direction of every ratio. Values are
 * written straight into the DOM on animation frames (textContent), not through React state, so
 * streaming costs no render. Nothing is cut: text wraps, and the full line is on hover too.
 */
export function StatTiles({ buffers }: { buffers: RunBuffers }): ReactNode {
  const values = useRef<(HTMLElement | null)[]>([]);
  const details = useRef<(HTMLElement | null)[]>([]);
  const drawn = useRef(-1);
  useFrameTask(() => {
    if (drawn.current === buffers.metrics.version) return false;
    drawn.current = buffers.metrics.version;
    TILES.forEach((tile, index) => {
      const value = values.current[index];
      const detail = details.current[index];
      if (value) {
        value.textContent = tile.value(buffers);
        value.title = `${tile.label}: ${value.textContent}`;
      }
      if (detail) {
        detail.textContent = tile.detail(buffers);
        detail.title = detail.textContent;
      }
    });
    return true;
  }, [buffers]);
  return (
    <dl className="stat-tiles" data-testid="stat-tiles">
      {TILES.map((tile, index) => (
        <div key={tile.key} className="stat-tile" data-testid={`stat-tile-${tile.key}`}>
          <dt>{tile.label}</dt>
          <dd>
            <span className="stat-value" ref={(el) => { values.current[index] = el; }} data-testid={`stat-${tile.key}`}>–</span>
            <span className="stat-detail" ref={(el) => { details.current[index] = el; }} data-testid={`stat-${tile.key}-detail`} />
          </dd>
        </div>
      ))}
    </dl>
  );
}
