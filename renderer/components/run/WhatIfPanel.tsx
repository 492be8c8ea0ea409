import { useDeferredValue, useMemo, useState, type CSSProperties, type ReactNode } from 'react';
import { bitsPerValue } from '../../../app/cache/layer-memory.js';
import { estimateKvMemory, type WhatIfResult } from '../../../app/accounting/memory-what-if.js';
import { whatIfVerdict, type WhatIfVerdict } from '../../../app/accounting/what-if-verdict.js';
import { layerKindStyle } from '../../format/layer-kinds.js';
import { compareToBaseline, formatBytes, significant } from '../../format/units.js';
import { useServices, useWorkbench } from '../../services.js';
import { NumberField } from '../common/NumberField.js';
import { withoutDocumentReferences as plain } from '../../format/user-text.js';
import { PeakWhatIf } from './PeakWhatIf.js';

const PLAN_LABEL = { quantized: 'quantized', dynamic: 'full precision', none: 'no KV cache' } as const;

/**
 * The memory what-if: the cache's bytes at a chosen context length, per layer type, before running.
 * Same formulas as a run's figures (app/accounting/memory-what-if.ts reuses app/cache/layer-memory.ts).
 */
export function WhatIfPanel(): ReactNode {
  const { store } = useServices();
  const { config, kvDtype, cacheMode, quantization, whatIf } = useWorkbench((s) => ({
    config: s.model.summary?.config ?? null, kvDtype: s.model.summary?.kvDtype ?? null, cacheMode: s.form.cacheMode, quantization: s.form.quantization, whatIf: s.whatIf,
  }));
  // what is typed in a field when it is not a number (the verdict argues with it)
  const [typed, setTyped] = useState<{ context: string | null; prompt: string | null }>({ context: null, prompt: null });
  const inputs = useDeferredValue({ config, kvDtype, cacheMode, quantization, whatIf, typed });
  const answer = useMemo<{ verdict: WhatIfVerdict; result: WhatIfResult | null } | null>(() => {
    if (inputs.config === null) return null;
    const verdict = whatIfVerdict({
      config: inputs.config, cacheMode: inputs.cacheMode, settings: inputs.quantization,
      contextLength: inputs.typed.context ?? inputs.whatIf.contextLength, promptTokens: inputs.typed.prompt ?? inputs.whatIf.promptTokens,
    });
    if (verdict.errors.length > 0) return { verdict, result: null };
    return {
      verdict,
      result: estimateKvMemory({
        config: inputs.config, kvDtype: inputs.kvDtype ?? 'float32', cacheMode: inputs.cacheMode, settings: inputs.quantization,
        promptTokens: inputs.whatIf.promptTokens, contextLength: inputs.whatIf.contextLength,
      }),
    };
  }, [inputs]);
  const update = store.getState().updateWhatIf;

  return (
    <section className="panel what-if" aria-labelledby="what-if-title" data-testid="what-if-panel">
      <h2 id="what-if-title">Memory what-if</h2>
      <div className="grid-2">
        <NumberField label="Context length" unit="tokens" value={whatIf.contextLength} onCommit={(contextLength) => update({ contextLength })} testId="whatif-context-input"
          onInvalid={(text) => setTyped((t) => ({ ...t, context: text }))} />
        <NumberField label="of which prompt" unit="tokens" value={whatIf.promptTokens} onCommit={(promptTokens) => update({ promptTokens })} testId="whatif-prompt-input"
          onInvalid={(text) => setTyped((t) => ({ ...t, prompt: text }))} />
      </div>
      {answer === null && <p className="muted">Open a model to estimate its cache.</p>}
      {answer !== null && answer.verdict.errors.length > 0 && (
        <div className="callout callout-error what-if-problems" role="alert" data-testid="whatif-problems">
          <strong>No estimate for this question.</strong>
          <ul>{answer.verdict.errors.map((error) => <li key={error} data-testid="whatif-problem">{plain(error)}</li>)}</ul>
        </div>
      )}
      {answer !== null && answer.verdict.warnings.map((warning) => <p key={warning} className="check-note" data-testid="whatif-warning">{warning}</p>)}
      {answer?.result != null && <WhatIfTable result={answer.result} dtype={kvDtype ?? 'float32'} cacheMode={cacheMode} />}
      {answer?.result != null && inputs.config !== null && (
        <PeakWhatIf config={inputs.config} kvDtype={inputs.kvDtype ?? 'float32'} settings={inputs.quantization}
          promptTokens={inputs.whatIf.promptTokens} contextLength={inputs.whatIf.contextLength} />
      )}
    </section>
  );
}

function WhatIfTable({ result, dtype, cacheMode }: { result: WhatIfResult; dtype: string; cacheMode: string }): ReactNode {
  const total = result.total;
  const baseline = dtype === 'float16' ? total.fp16BaselineBytes : total.fp32BaselineBytes;
  const dtypeName = dtype === 'float16' ? 'fp16' : 'fp32';
  const sliding = result.rows.some((row) => row.window !== null && row.perLayer !== null);
  const share = (bytes: number): CSSProperties => ({ width: `${baseline > 0 ? Math.min(100, (100 * bytes) / baseline) : 0}%` });
  return (
    <>
      <table className="what-if-table" data-testid="whatif-table">
        <caption className="muted">
          Bytes per layer{cacheMode === 'quantized' ? `; ${result.quantizedTokens} tokens quantized, ${result.residualTokens} in the residual after ${result.flushes} flushes` : ''}; KV dtype {dtype}.
        </caption>
        <thead>
          <tr><th scope="col">Layer type</th><th scope="col">Cache</th><th scope="col" className="num">Per layer</th><th scope="col" className="num">All layers</th></tr>
        </thead>
        <tbody>
          {result.rows.map((row) => {
            const style = layerKindStyle(row.kind);
            const m = row.perLayer;
            return (
              <tr key={`${row.kind}-${row.plan}-${row.layers[0] ?? 0}`} data-testid="whatif-row" data-kind={row.kind} data-plan={row.plan}>
                <th scope="row"><span className="legend-swatch" style={{ background: `var(${style.colorVariable})` }} aria-hidden="true">{style.letter}</span> {style.name} × {row.layers.length}</th>
                <td>
                  {PLAN_LABEL[row.plan]}
                  {row.window !== null && m !== null && (
                    <small className="muted block" data-testid="whatif-window">
                      transformers keeps the last {m.tokens} of {m.fedTokens ?? m.tokens} tokens (window {row.window}); the graph is fed {formatBytes(m.fedBytes ?? m.totalBytes)} per layer
                    </small>
                  )}
                </td>
                {row.error !== null ? (
                  <td colSpan={2} className="error-text" data-testid="whatif-row-error">{row.error}</td>
                ) : m === null ? (
                  <td colSpan={2} className="muted">—</td>
                ) : (
                  <>
                    <td className="num" title={`codes ${formatBytes(m.codeBytes)} + scale/zero ${formatBytes(m.metadataBytes)} + full precision ${formatBytes(m.fullPrecisionBytes)}`}>{formatBytes(m.totalBytes)}</td>
                    <td className="num">{formatBytes(m.totalBytes * row.layers.length)}</td>
                  </>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
      <div className="what-if-total">
        <div className="bar" role="img" aria-label={`Stored ${formatBytes(total.totalBytes)} against the ${dtypeName} dynamic cache of ${formatBytes(baseline)}`}>
          <span className="seg seg-codes" style={share(total.codeBytes)} />
          <span className="seg seg-metadata" style={share(total.metadataBytes)} />
          <span className="seg seg-full-precision" style={share(total.fullPrecisionBytes)} />
        </div>
        <ul className="bar-legend" aria-hidden="true">
          <li><span className="swatch seg-codes" /> codes {formatBytes(total.codeBytes)}</li>
          <li><span className="swatch seg-metadata" /> scale/zero {formatBytes(total.metadataBytes)}</li>
          <li><span className="swatch seg-full-precision" /> full precision {formatBytes(total.fullPrecisionBytes)}</li>
        </ul>
        <dl className="facts">
          <div className="fact"><dt>Stored</dt><dd data-testid="whatif-total">{formatBytes(total.totalBytes)}</dd></div>
          <div className="fact"><dt>{dtypeName} dynamic cache</dt><dd data-testid="whatif-baseline-dtype">{formatBytes(baseline)}</dd></div>
          <div className="fact"><dt>fp16 dynamic cache</dt><dd data-testid="whatif-baseline">{formatBytes(total.fp16BaselineBytes)}</dd></div>
          <div className="fact"><dt>Bits per value</dt><dd data-testid="whatif-bits">{significant(bitsPerValue(total), 3)}</dd></div>
          {sliding && <div className="fact"><dt>Fed to the graph</dt><dd data-testid="whatif-fed">{formatBytes(result.fedBytes)}</dd></div>}
        </dl>
        <p className="what-if-ratios" data-testid="whatif-ratio">
          Stored is {compareToBaseline(baseline, total.totalBytes, `the ${dtypeName} dynamic cache it replaces`)}
          {dtype !== 'float16' && <>, and {compareToBaseline(total.fp16BaselineBytes, total.totalBytes, 'an fp16 one')}</>}.
        </p>
      </div>
    </>
  );
}
