import type { ReactNode } from 'react';
import { formatBytes } from '../../format/units.js';
import { useServices, useWorkbench } from '../../services.js';
import { ErrorDetails } from '../common/ErrorDetails.js';
import { pointLabel } from './lab-metrics.js';

/** One opened point: llama.cpp's statistics with their errors, the cache's memory, per-layer K/V errors. */
export function PointDetail(): ReactNode {
  const { store } = useServices();
  const { opened, row } = useWorkbench((s) => ({ opened: s.lab.opened, row: s.lab.sweep.rows.find((r) => r.name === s.lab.opened.name) }));
  if (opened.status === 'idle') return null;
  const record = opened.record;
  const s = record?.summary;
  const q = record?.settings.quantization;
  return (
    <section className="panel lab-point" aria-label="Point" data-testid="lab-point" data-name={opened.name ?? ''}>
      <header className="view-header">
        <h3>Point {row === undefined ? opened.name : `#${row.index} ${pointLabel(row)}`}</h3>
        <button type="button" onClick={() => store.getState().closeLabPoint()} data-testid="lab-point-close">Close</button>
      </header>
      {opened.status === 'loading' && <p className="muted">Loading…</p>}
      {opened.error !== null && <div className="callout callout-error" role="alert"><ErrorDetails error={opened.error} testId="lab-point-error" /></div>}
      {record !== null && s !== undefined && q !== undefined && (
        <>
          <p className="muted">
            {record.settings.cacheMode === 'dynamic' ? 'dynamic cache' : `${q.backend} ${q.nbits}-bit, axes ${q.axisKey}/${q.axisValue}, group ${q.groupSize}, residual ${q.residualLength}`}
            {' · '}{record.windows.count} windows of {record.windows.context} (prefill {record.windows.prefill}) · {s.tokens} predictions · fed {record.feed}
          </p>
          {record.extensions.length > 0 && <p className="callout">kvscope extensions: {record.extensions.join('; ')}</p>}
          <dl className="lab-stats" data-testid="lab-point-stats">
            <dt>Mean PPL(Q)</dt><dd data-testid="lab-point-ppl">{s.ppl.toFixed(4)} ± {s.pplError.toFixed(4)}</dd>
            <dt>Mean PPL(base)</dt><dd>{s.pplReference.toFixed(4)} ± {s.pplReferenceError.toFixed(4)}</dd>
            <dt>PPL(Q)/PPL(base)</dt><dd>{s.pplRatio.toFixed(6)} ± {s.pplRatioError.toFixed(6)}</dd>
            <dt>PPL(Q)−PPL(base)</dt><dd>{s.deltaPpl.toFixed(4)} ± {s.deltaPplError.toFixed(4)}</dd>
            <dt>Mean KLD</dt><dd data-testid="lab-point-kld">{s.kld.mean.toFixed(6)} ± {s.kld.meanError.toFixed(6)}</dd>
            <dt>KLD median / p99 / p99.9 / max</dt><dd>{s.kld.median.toPrecision(3)} / {s.kld.p99.toPrecision(3)} / {s.kld.p999.toPrecision(3)} / {s.kld.max.toPrecision(3)}</dd>
            <dt>Same top p</dt><dd>{(100 * s.top1Agreement).toFixed(3)} ± {(100 * s.top1AgreementError).toFixed(3)} %</dd>
            <dt>Mean Δp / RMS Δp</dt><dd>{(100 * s.deltaP.mean).toFixed(3)} % / {(100 * s.deltaP.rms).toFixed(3)} ± {(100 * s.deltaP.rmsError).toFixed(3)} %</dd>
            <dt>KV stored</dt><dd>{formatBytes(record.memory.storedBytes)} ({record.memory.bitsPerValue.toFixed(2)} bits/value) vs fp16 {formatBytes(record.memory.total.fp16BaselineBytes)}</dd>
          </dl>
          {record.layerErrors.length > 0 && (
            <table className="lab-table">
              <thead><tr><th scope="col">layer</th><th scope="col" className="num">quantize events</th><th scope="col" className="num">K rel. error</th><th scope="col" className="num">V rel. error</th></tr></thead>
              <tbody>
                {record.layerErrors.map((e) => (
                  <tr key={e.layer}>
                    <td>{e.layer}</td><td className="num">{e.events}</td>
                    <td className="num">{e.key === null ? '–' : e.key.relFroErrMean.toExponential(2)}</td>
                    <td className="num">{e.value === null ? '–' : e.value.relFroErrMean.toExponential(2)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
