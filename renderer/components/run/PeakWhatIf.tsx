import { useMemo, type ReactNode } from 'react';
import type { QuantizedCacheSettings } from '../../../app/cache/cache-config.js';
import type { ModelConfig } from '../../../app/config/model-config.js';
import type { KvDtype } from '../../../app/tensor/kv-tensor.js';
import { estimateKvPeaks } from '../../../app/accounting/peak-what-if.js';
import { formatBytes } from '../../format/units.js';

interface PeakWhatIfProps {
  readonly config: ModelConfig;
  readonly kvDtype: KvDtype;
  readonly settings: QuantizedCacheSettings;
  readonly promptTokens: number;
  readonly contextLength: number;
}

/**
 * The what-if's peaks: what the process would hold because of the cache at this context, for each way
 * of running it (app/cache/kv-peak.ts; bench/in-graph-memory.ts checks them against measured runs).
 * Stored bytes are the same for the graph and host paths; their peaks are not.
 */
export function PeakWhatIf({ config, kvDtype, settings, promptTokens, contextLength }: PeakWhatIfProps): ReactNode {
  const peaks = useMemo(() => {
    try {
      return estimateKvPeaks({ config, kvDtype, settings, promptTokens, contextLength });
    } catch {
      return null; // a backend refusing the shape: the table above says why
    }
  }, [config, kvDtype, settings, promptTokens, contextLength]);
  if (peaks === null) return null;
  const rows = [
    { id: 'graph', label: 'dequantized in the graph', peak: peaks.graph },
    { id: 'host', label: 'dequantized on the host', peak: peaks.host },
    { id: 'dynamic', label: 'dynamic cache (full precision)', peak: peaks.dynamic },
  ];
  return (
    <dl className="facts" data-testid="whatif-peaks" aria-label="Predicted peak process memory of the cache">
      {rows.map((row) => (
        <div className="fact" key={row.id} title={row.peak.parts.map((part) => `${part.label}: ${formatBytes(part.bytes)}`).join('\n')}>
          <dt>Peak, {row.label}</dt>
          <dd data-testid={`whatif-peak-${row.id}`}>{formatBytes(row.peak.bytes)}</dd>
        </div>
      ))}
    </dl>
  );
}
