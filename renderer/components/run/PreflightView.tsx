import type { ReactNode } from 'react';
import type { RunCheck } from '../../../app/preflight/check-run.js';
import { useServices, useWorkbench } from '../../services.js';
import { DiagnosticList } from '../common/DiagnosticList.js';
import { ErrorDetails } from '../common/ErrorDetails.js';
import { MessageText } from '../common/MessageText.js';
import { withoutDocumentReferences as plain } from '../../format/user-text.js';
import { parsePromptIds } from '../../../app/engine/prompt-token-ids.js';
import { promptIdsFieldProblem, promptTakesIds } from '../../store/settings-slice.js';

/**
 * The run check, on every edit: the prompt as the run tokenizes it, the lengths the cache will
 * quantize, transformers' verdict and the backends' constraints on exactly those lengths, and, when it
 * refuses, why (the library's own text first) and the nearest settings that run, one click each.
 * The defaults stay transformers' own: a fix changes only the fields it names, and only when clicked.
 */
export function PreflightView(): ReactNode {
  const { controller } = useServices();
  const { preflight, cacheMode, hasModel, modelOk, layers, idsProblem } = useWorkbench((s) => ({
    preflight: s.preflight, cacheMode: s.form.cacheMode, hasModel: s.model.summary?.config != null, modelOk: s.model.summary?.ok === true,
    layers: s.model.summary?.config?.layers.numLayers ?? 0,
    // only text that is not a list of ids goes unchecked; the host checks every list of ids
    idsProblem: promptTakesIds(s.form, s.model.summary) && parsePromptIds(s.form.promptIds) === null ? promptIdsFieldProblem(s.form, s.model.summary)?.message ?? null : null,
  }));
  const check = preflight.check;
  const stale = preflight.status === 'checking';
  let headline: string;
  let tone: 'ok' | 'error' | 'warning' | 'idle';
  if (!hasModel) {
    headline = 'Open a model to check these settings.';
    tone = 'idle';
  } else if (!modelOk) {
    headline = 'The model checks found errors (see the model panel): no run can start.';
    tone = 'error';
  } else if (idsProblem !== null) {
    // the text is not a list of ids: said under the field; no check runs on it
    headline = `Not checked: ${idsProblem.charAt(0).toUpperCase()}${idsProblem.slice(1)}`;
    tone = 'error';
  } else if (check === null) {
    headline = preflight.status === 'error' ? 'The run check could not run.' : 'Checking…';
    tone = preflight.status === 'error' ? 'error' : 'idle';
  } else {
    ({ headline, tone } = verdict(check, cacheMode, layers));
  }
  const others = check?.preflight?.diagnostics.filter((d) => d.severity !== 'error') ?? [];
  return (
    <section id="run-check" className={`preflight tone-${tone}`} aria-live="polite" aria-busy={stale} data-testid="preflight-panel" data-stale={stale}>
      <h3>
        Run check
        {check?.elapsedMs !== undefined && !stale && <span className="muted check-time" data-testid="check-time"> · checked in {check.elapsedMs < 1 ? '<1' : check.elapsedMs.toFixed(0)} ms</span>}
        {stale && <span className="muted check-time"> · checking…</span>}
      </h3>
      <p className="preflight-status" data-testid="preflight-status" data-tone={tone}>{headline}</p>
      {check !== null && check.promptTokens > 0 && <CheckLengths check={check} quantized={cacheMode === 'quantized'} />}
      {preflight.error !== null && <ErrorDetails error={preflight.error} testId="preflight-error" />}
      {check?.refusal != null && (
        <div className="refusal" data-testid="preflight-refusal">
          <MessageText message={check.refusal.message} verbatimFirst testId="preflight-refusal-message" />
          {check.refusal.fix !== undefined && <p className="fix"><strong>What to do:</strong> {plain(check.refusal.fix)}</p>}
        </div>
      )}
      {check !== null && check.fixes.length > 0 && (
        <div className="fixes" data-testid="run-fixes">
          <p className="fixes-title">Nearest settings that run <span className="muted">(one click each; transformers' defaults stay the defaults)</span></p>
          <ul>
            {check.fixes.map((fix) => (
              <li key={`${fix.kind}-${fix.label}`}>
                <button type="button" className="fix-button" onClick={() => controller.applyFix(fix)} data-testid="run-fix" data-kind={fix.kind} title={fix.detail}>
                  {fix.label}
                </button>
                <small className="muted">{fix.detail}</small>
              </li>
            ))}
          </ul>
        </div>
      )}
      {check?.notes.map((note) => <p key={note} className="check-note" data-testid="check-note">{plain(note)}</p>)}
      {others.length > 0 && cacheMode === 'quantized' && (
        <details className="check-findings">
          <summary>{others.length} other finding{others.length === 1 ? '' : 's'} (warnings, notes)</summary>
          <DiagnosticList diagnostics={others} testId="preflight-diagnostics" />
        </details>
      )}
    </section>
  );
}

function verdict(check: RunCheck, cacheMode: string, layers: number): { headline: string; tone: 'ok' | 'error' | 'warning' } {
  if (check.refusal !== null) {
    const where = check.failure === null ? '' : check.failure.step === 0 ? ` at prefill (${check.failure.seq} tokens)` : ` at the flush of decode step ${check.failure.step}`;
    return { headline: `Refused before Run${where}: Run stays disabled until the settings change.`, tone: 'error' };
  }
  const warnings = check.preflight?.diagnostics.filter((d) => d.severity === 'warning').length ?? 0;
  const quantized = check.preflight?.layers.filter((layer) => layer.quantized).length ?? 0;
  const cache = cacheMode === 'dynamic' ? 'full-precision cache' : `${quantized} of ${layers} layers quantized`;
  const extra = warnings + check.notes.length;
  return {
    headline: `OK: ${cache}${extra > 0 ? `, ${extra} warning${extra === 1 ? '' : 's'}` : ''}.`,
    tone: extra > 0 ? 'warning' : 'ok',
  };
}

/** The real lengths: what the tokenizer made of the prompt, how far the run can go, what the cache will quantize. */
function CheckLengths({ check, quantized }: { check: RunCheck; quantized: boolean }): ReactNode {
  return (
    <dl className="facts compact check-lengths" data-testid="check-lengths">
      <div className="fact"><dt>Prompt</dt><dd data-testid="check-prompt-tokens">{check.promptTokens} tokens</dd></div>
      <div className="fact"><dt>Context</dt><dd data-testid="check-context">{check.promptTokens} + {check.maxNewTokens} = {check.contextTokens}{check.maxPositions !== null ? ` of ${check.maxPositions}` : ''} positions</dd></div>
      {quantized && <div className="fact"><dt>Flushes</dt><dd data-testid="check-flushes">{check.flushes} if all {check.maxNewTokens} tokens are made</dd></div>}
    </dl>
  );
}
