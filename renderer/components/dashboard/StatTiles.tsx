import { useRef, type ReactNode } from 'react';
import type { RunBuffers } from '../../controller/live-buffers.js';
import { formatBytes, formatCompression, formatError, formatPercent, formatTokensPerSecond, significant } from '../../format/units.js';
import { useFrameTask } from '../../metrics/use-frame-task.js';

interface Tile {
  readonly key: string;
  readonly label: string;
  readonly value: (buffers: RunBuffers) => string;
  readonly detail: (buffers: RunBuffers) => string;
}

const TILES: readonly Tile[] = [
  {
    key: 'steps', label: 'Steps',
    value: (b) => `${b.metrics.stepCount}`,
    detail: (b) => `of ${b.metrics.expectedSteps} · context ${finite(b.metrics.steps.last('seqLength'))} tokens`,
  },
  {
    key: 'kv', label: 'KV stored',
    value: (b) => formatBytes(b.metrics.steps.last('totalBytes')),
    detail: (b) => `fp16 baseline ${formatBytes(b.metrics.steps.last('fp16BaselineBytes'))}`,
  },
  {
    key: 'ratio', label: 'vs fp16 baseline',
    value: (b) => formatCompression(b.metrics.steps.last('fp16BaselineBytes'), b.metrics.steps.last('totalBytes')).split(' ')[0]!,
    detail: (b) => {
      const baseline = b.metrics.steps.last('fp16BaselineBytes');
      const stored = b.metrics.steps.last('totalBytes');
      if (!(baseline > 0)) return '–';
      const direction = stored <= baseline ? 'smaller' : 'larger';
      return `${direction} · ${significant((8 * stored) / (baseline / 2), 3)} bits/value`;
    },
  },
  {
    key: 'flushes', label: 'Flushes per layer',
    value: (b) => String(b.metrics.flushesPerLayer() ?? 0),
    detail: (b) => `${b.metrics.totalFlushes()} in all layers`,
  },
  {
    key: 'speed', label: 'Decode speed',
    value: (b) => formatTokensPerSecond(b.metrics.steps.last('tokensPerSecond')),
    detail: (b) => `last step ${significant(b.metrics.steps.last('totalMs'), 3)} ms`,
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
 * The run's headline figures with units and baselines. Values are written straight into the DOM on
 * animation frames (textContent), not through React state, so streaming costs no render.
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
      if (value) value.textContent = tile.value(buffers);
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
        <div key={tile.key} className="stat-tile">
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
