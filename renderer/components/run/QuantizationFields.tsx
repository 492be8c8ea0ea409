import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../../app/cache/cache-config.js';
import { useId, type ReactNode } from 'react';
import type { LayerPolicy } from '../../../app/cache/cache-config.js';
import { useServices, useWorkbench } from '../../services.js';
import { BACKEND_CHOICES } from '../../store/settings-slice.js';
import { NumberField } from '../common/NumberField.js';

const ALL_NBITS = [1, 2, 3, 4, 8];
const ALL_AXES = [-1, 0, 1];

/**
 * transformers' QuantizedCache arguments. Every value either backend accepts is offered, each marked
 * with the backends that take it: an impossible combination stays selectable and the preflight below
 * says why it fails (transformers' own message first) and what would work.
 */
export function QuantizationFields({ disabled }: { disabled: boolean }): ReactNode {
  const { store } = useServices();
  const q = useWorkbench((s) => s.form.quantization);
  const editedWith = useWorkbench((s) => s.quantizationEditedWith);
  const modelName = useWorkbench((s) => s.model.summary?.displayName ?? null);
  const atDefaults = JSON.stringify(q) === JSON.stringify(DEFAULT_QUANTIZED_CACHE_SETTINGS);
  // settings carry over when another model opens; say so, with the way back to transformers' defaults
  const carried = !atDefaults && editedWith !== null && modelName !== null && editedWith !== modelName;
  const ids = { backend: useId(), nbits: useId(), axisKey: useId(), axisValue: useId(), policy: useId() };
  const update = store.getState().updateQuantization;
  const backend = String(q.backend);
  const accepts = (kind: 'nbits' | 'axes', value: number): string => {
    const takers = (['quanto', 'hqq'] as const).filter((b) => BACKEND_CHOICES[b][kind].includes(value));
    return takers.length === 2 ? '' : takers.length === 0 ? ' (no backend)' : ` (${takers[0]} only)`;
  };
  const axisSelect = (id: string, label: string, value: number, key: 'axisKey' | 'axisValue', testId: string): ReactNode => (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => update({ [key]: Number(event.target.value) })} data-testid={testId}>
        {ALL_AXES.map((axis) => <option key={axis} value={axis}>{axis}{accepts('axes', axis)}</option>)}
      </select>
    </div>
  );
  return (
    <fieldset className="quantization" disabled={disabled} data-testid="quantization-fields">
      <legend>Quantization</legend>
      <div className="defaults-row">
        {carried && <span className="muted" data-testid="settings-carried">Kept from {editedWith}.</span>}
        <button type="button" className="link" disabled={atDefaults} onClick={() => store.getState().resetToTransformersDefaults()}
          title="transformers' QuantizedCache defaults: quanto 4-bit, axes 0/0, group 64, residual 128, no kvscope extension" data-testid="transformers-defaults">
          transformers' defaults
        </button>
      </div>
      <div className="grid-2">
        <div className="field">
          <label htmlFor={ids.backend}>Backend</label>
          <select id={ids.backend} value={backend} onChange={(event) => update({ backend: event.target.value })} data-testid="backend-select">
            <option value="quanto">quanto</option>
            <option value="hqq">HQQ</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.nbits}>Bits</label>
          <select id={ids.nbits} value={q.nbits} onChange={(event) => update({ nbits: Number(event.target.value) })} data-testid="nbits-select">
            {ALL_NBITS.map((n) => <option key={n} value={n}>{n}{accepts('nbits', n)}</option>)}
          </select>
        </div>
        {axisSelect(ids.axisKey, 'Key axis', q.axisKey, 'axisKey', 'axis-key-select')}
        {axisSelect(ids.axisValue, 'Value axis', q.axisValue, 'axisValue', 'axis-value-select')}
        <NumberField label="Group size" value={q.groupSize} onCommit={(groupSize) => update({ groupSize })} testId="group-size-input" hint="q_group_size" />
        <NumberField label="Residual length" value={q.residualLength} onCommit={(residualLength) => update({ residualLength })} testId="residual-length-input" unit="tokens" />
      </div>
      <div className="field">
        <label htmlFor={ids.policy}>Layer policy</label>
        <select id={ids.policy} value={q.layerPolicy} onChange={(event) => update({ layerPolicy: event.target.value as LayerPolicy })} data-testid="layer-policy-select">
          <option value="all">all layers (transformers)</option>
          <option value="full-attention-only">full-attention layers only (kvscope)</option>
        </select>
      </div>
    </fieldset>
  );
}
