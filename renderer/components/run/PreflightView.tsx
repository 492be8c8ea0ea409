import type { ReactNode } from 'react';
import { useWorkbench } from '../../services.js';
import { DiagnosticList } from '../common/DiagnosticList.js';
import { ErrorDetails } from '../common/ErrorDetails.js';

/** The inline preflight: transformers' verdict and what it misses, for the settings on screen. */
export function PreflightView(): ReactNode {
  const { preflight, cacheMode, hasModel } = useWorkbench((s) => ({ preflight: s.preflight, cacheMode: s.form.cacheMode, hasModel: s.model.summary?.config != null }));
  const result = preflight.result;
  let headline: string;
  let tone: 'ok' | 'error' | 'warning' | 'idle';
  if (!hasModel) {
    headline = 'Open a model to check these settings.';
    tone = 'idle';
  } else if (cacheMode === 'dynamic') {
    headline = 'Full-precision cache: nothing to check.';
    tone = 'ok';
  } else if (result === null) {
    headline = preflight.status === 'error' ? 'The preflight could not run.' : 'Checking…';
    tone = preflight.status === 'error' ? 'error' : 'idle';
  } else {
    const errors = result.diagnostics.filter((d) => d.severity === 'error').length;
    const warnings = result.diagnostics.filter((d) => d.severity === 'warning').length;
    const quantized = result.layers.filter((layer) => layer.quantized).length;
    headline = errors > 0
      ? `Refused: ${errors} error${errors === 1 ? '' : 's'} (the first is what transformers raises).`
      : `OK: ${quantized} of ${result.layers.length} layers quantized${warnings > 0 ? `, ${warnings} warning${warnings === 1 ? '' : 's'}` : ''}.`;
    tone = errors > 0 ? 'error' : warnings > 0 ? 'warning' : 'ok';
  }
  return (
    <section className={`preflight tone-${tone}`} aria-live="polite" aria-busy={preflight.status === 'checking'} data-testid="preflight-panel">
      <h3>Preflight</h3>
      <p className="preflight-status" data-testid="preflight-status" data-tone={tone}>{headline}</p>
      {preflight.error !== null && <ErrorDetails error={preflight.error} testId="preflight-error" />}
      {result !== null && cacheMode === 'quantized' && <DiagnosticList diagnostics={result.diagnostics} testId="preflight-diagnostics" />}
    </section>
  );
}
