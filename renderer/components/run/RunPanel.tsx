import { useId, type ReactNode } from 'react';
import type { ExecutionProviderName } from '../../../app/engine/types.js';
import { useServices, useWorkbench } from '../../services.js';
import { runBlockedReason } from '../../store/preflight-slice.js';
import { isRunActive } from '../../store/run-slice.js';
import { promptIdsFieldProblem, promptTakesIds } from '../../store/settings-slice.js';
import { shortcutLabel } from '../../use-shortcuts.js';
import { asSentence } from '../../format/user-text.js';
import { NumberField } from '../common/NumberField.js';
import { PreflightView } from './PreflightView.js';
import { ExtensionsFields } from './ExtensionsFields.js';
import { DequantizePathField } from './DequantizePathField.js';
import { QuantizationFields } from './QuantizationFields.js';
import { SamplingFields } from './SamplingFields.js';

/** Everything a run is asked to do, checked inline by the preflight as it is edited. */
export function RunPanel(): ReactNode {
  const { store, controller } = useServices();
  const { form, environment, blocked, active, chatTemplate, host, takesIds, hasTokenizer } = useWorkbench((s) => ({
    form: s.form, environment: s.environment, blocked: runBlockedReason(s), active: isRunActive(s.run.status),
    chatTemplate: s.model.summary?.chatTemplate ?? null, host: s.host,
    takesIds: promptTakesIds(s.form, s.model.summary), hasTokenizer: s.model.summary?.hasTokenizer !== false,
  }));
  const ids = { ep: useId(), prompt: useId(), cache: useId() };
  const update = store.getState().updateForm;
  const providers = environment?.executionProviders ?? [{ name: 'cpu' as ExecutionProviderName, available: true }];
  const unavailable = providers.filter((ep) => !ep.available);

  return (
    <section className="panel run-panel" aria-labelledby="run-panel-title" data-testid="run-panel">
      <h2 id="run-panel-title">Run</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void controller.startRun();
        }}
      >
        <fieldset className="segmented" aria-describedby={`${ids.cache}-hint`}>
          <legend className="visually-hidden">Cache</legend>
          <label className={form.cacheMode === 'quantized' ? 'selected' : undefined}>
            <input type="radio" name="cache-mode" checked={form.cacheMode === 'quantized'} onChange={() => update({ cacheMode: 'quantized' })} data-testid="cache-mode-quantized" />
            Quantized
          </label>
          <label className={form.cacheMode === 'dynamic' ? 'selected' : undefined}>
            <input type="radio" name="cache-mode" checked={form.cacheMode === 'dynamic'} onChange={() => update({ cacheMode: 'dynamic' })} data-testid="cache-mode-dynamic" />
            Dynamic (full precision)
          </label>
        </fieldset>
        <small id={`${ids.cache}-hint`} className="hint block">transformers' QuantizedCache or DynamicCache semantics.</small>

        <QuantizationFields disabled={form.cacheMode === 'dynamic'} />
        <DequantizePathField disabled={form.cacheMode === 'dynamic'} />
        <ExtensionsFields disabled={form.cacheMode === 'dynamic'} />

        <div className="field">
          <label htmlFor={ids.ep}>Execution provider</label>
          <select id={ids.ep} value={form.executionProvider} onChange={(event) => update({ executionProvider: event.target.value as ExecutionProviderName })} data-testid="ep-select">
            {providers.map((ep) => (
              <option key={ep.name} value={ep.name} disabled={!ep.available}>
                {ep.name}{ep.available ? '' : ' (unavailable)'}
              </option>
            ))}
          </select>
          {unavailable.length > 0 && (
            <details className="hint">
              <summary>Why {unavailable.map((ep) => ep.name).join(', ')} {unavailable.length === 1 ? 'is' : 'are'} unavailable</summary>
              <ul data-testid="ep-reasons">
                {unavailable.map((ep) => (
                  <li key={ep.name}>
                    <strong>{ep.name}</strong>: {asSentence(ep.reason ?? 'not available in this build.')}
                    {ep.fix !== undefined && <> <span className="muted">How to enable it:</span> {ep.fix}</>}
                  </li>
                ))}
              </ul>
            </details>
          )}
        </div>

        {takesIds ? <PromptIdsField value={form.promptIds} onChange={(promptIds) => update({ promptIds })} onText={hasTokenizer ? () => update({ promptInput: 'text' }) : null} /> : (
          <div className="field">
            <label htmlFor={ids.prompt}>Prompt</label>
            <textarea id={ids.prompt} rows={3} value={form.prompt} onChange={(event) => update({ prompt: event.target.value })} data-testid="prompt-input" />
            <label className="check" title={chatTemplate === null ? 'This model has no chat template (tokenizer_config.json chat_template or chat_template.jinja).' : undefined}>
              <input
                type="checkbox" disabled={chatTemplate === null} checked={chatTemplate !== null && form.promptFormat === 'chat'}
                onChange={(event) => update({ promptFormat: event.target.checked ? 'chat' : 'text' })} data-testid="chat-format-toggle"
              />
              <span>
                As a chat turn{' '}
                <span className="muted" data-testid="chat-format-hint">
                  {chatTemplate === null ? '(this model has no chat template)' : `(the model's chat template, from ${chatTemplate})`}
                </span>
              </span>
            </label>
            <button type="button" className="link-button" onClick={() => update({ promptInput: 'ids' })} data-testid="prompt-as-ids">Give the prompt as token ids instead</button>
          </div>
        )}
        <div className="grid-2">
          <NumberField label="Max new tokens" value={form.maxNewTokens} min={1} max={1_000_000} onCommit={(maxNewTokens) => update({ maxNewTokens })} testId="max-new-tokens-input" />
          <PaddingField value={form.padPromptTo} onChange={(padPromptTo) => update({ padPromptTo })} />
        </div>
        <SamplingFields />
        <label className="check">
          <input type="checkbox" checked={form.reference} onChange={(event) => update({ reference: event.target.checked })} data-testid="reference-toggle" />
          <span>Reference lane <span className="muted">(replays the tokens through a full-precision cache: KL and top-1 agreement per step)</span></span>
        </label>

        <PreflightView />

        <div className="run-actions">
          <button type="submit" className="primary" disabled={blocked !== null || active} data-testid="run-panel-run" title={blocked ?? `Run (${shortcutLabel('run', host)})`}>
            Run
          </button>
          <button type="button" disabled={!active} onClick={() => void controller.cancelRun()} data-testid="run-panel-stop" title={`Stop (${shortcutLabel('stop', host)})`}>
            Stop
          </button>
        </div>
        {blocked !== null && !active && <p className="run-blocked" role="status" data-testid="run-blocked-reason">Run is disabled: {blocked}</p>}
      </form>
    </section>
  );
}

/**
 * The prompt as token ids (RunSettings.promptTokenIds), fed as they are: the only way to prompt a
 * model folder without a tokenizer, an alternative to text otherwise. The ids are read and checked
 * against the model's vocabulary as they are typed (app/engine/prompt-token-ids.ts); the host's run
 * check then works on exactly these ids.
 */
function PromptIdsField({ value, onChange, onText }: { value: string; onChange: (value: string) => void; onText: (() => void) | null }): ReactNode {
  const id = useId();
  const { problem, vocabSize } = useWorkbench((s) => ({
    problem: promptIdsFieldProblem(s.form, s.model.summary)?.message ?? null,
    vocabSize: s.model.summary?.vocabSize ?? null,
  }));
  const range = vocabSize === null ? '' : `, each from 0 to ${vocabSize - 1}`;
  return (
    <div className="field">
      <label htmlFor={id}>Prompt <span className="unit">(token ids)</span></label>
      <textarea
        id={id} rows={2} value={value} placeholder="1, 15043, 727" spellCheck={false} aria-invalid={problem !== null} aria-describedby={`${id}-hint`}
        onChange={(event) => onChange(event.target.value)} data-testid="prompt-ids-input"
      />
      <small id={`${id}-hint`} className="hint block" data-testid="prompt-ids-hint">
        {onText === null ? 'This model has no tokenizer.json, so the prompt is given as token ids' : 'Fed as they are (no BOS added)'}
        {range}, separated by commas or spaces.{onText === null ? ' The generated text is shown as ids.' : ''}
      </small>
      {problem !== null && value.trim() !== '' && <p className="field-problem" role="alert" data-testid="prompt-ids-problem">{problem.charAt(0).toUpperCase()}{problem.slice(1)}</p>}
      {onText !== null && <button type="button" className="link-button" onClick={onText} data-testid="prompt-as-text">Give the prompt as text instead</button>}
    </div>
  );
}

/**
 * Left padding to a token count (RunSettings.padPromptTo): empty means none. The run check offers it
 * as a fix when the prompt's length does not split into groups.
 */
function PaddingField({ value, onChange }: { value: number | null; onChange: (value: number | null) => void }): ReactNode {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>Left-pad prompt to <span className="unit">(tokens)</span></label>
      <input
        id={id} type="number" min={1} step={1} inputMode="numeric" placeholder="no padding" value={value ?? ''} data-testid="pad-prompt-input"
        onChange={(event) => {
          const text = event.target.value.trim();
          const next = Number(text);
          if (text === '') onChange(null);
          else if (Number.isInteger(next) && next >= 1) onChange(next);
        }}
      />
    </div>
  );
}
