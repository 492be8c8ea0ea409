import { useId, type ReactNode } from 'react';
import type { Diagnostic } from '../../../app/preflight/diagnostic.js';
import { useServices, useWorkbench } from '../../services.js';
import { layerHandlingOf, type LayerHandling } from '../../store/settings-slice.js';
import { compactList } from '../common/DiagnosticList.js';
import { MessageText } from '../common/MessageText.js';

const CHOICES: readonly { value: LayerHandling; label: string; detail: string }[] = [
  { value: 'refuse', label: 'Refuse', detail: 'transformers\' behaviour: a quantized run of this model is refused.' },
  { value: 'full-attention-only', label: 'Quantize full-attention layers only', detail: 'kvscope\'s layer policy: the other layers keep a full-precision cache.' },
  { value: 'dynamic', label: 'Use the dynamic cache', detail: 'no quantization at all (transformers\' DynamicCache).' },
];

/** transformers' verdict on the model's layer types, verbatim, and the three ways to go on. */
export function LayerVerdict({ verdict }: { verdict: Diagnostic }): ReactNode {
  const { store } = useServices();
  const handling = useWorkbench((s) => layerHandlingOf(s.form));
  const name = useId();
  return (
    <section className="verdict" aria-labelledby={`${name}-title`} data-testid="layer-verdict">
      <h3 id={`${name}-title`}>transformers refuses a quantized cache for this model</h3>
      <MessageText message={verdict.message} verbatimFirst testId="layer-verdict-message" />
      <p className="muted">Flagged layers: {compactList(verdict.layers)}</p>
      <fieldset className="choices">
        <legend>How to run it</legend>
        {CHOICES.map((choice) => (
          <label key={choice.value} className={`choice${handling === choice.value ? ' selected' : ''}`}>
            <input
              type="radio"
              name={name}
              value={choice.value}
              checked={handling === choice.value}
              onChange={() => store.getState().chooseLayerHandling(choice.value)}
              data-testid={`layer-handling-${choice.value}`}
            />
            <span><strong>{choice.label}</strong> <span className="muted">{choice.detail}</span></span>
          </label>
        ))}
      </fieldset>
    </section>
  );
}
