import { useId, type ReactNode } from 'react';
import { activeExtensions, EXTENSIONS_HEADING } from '../../../app/cache/active-extensions.js';
import type { CacheExtensions } from '../../../app/cache/cache-extensions.js';
import { useServices, useWorkbench } from '../../services.js';
import { NumberField } from '../common/NumberField.js';
import { LayerMapEditor } from './LayerMapEditor.js';
import { RUNTIME_GROUPS } from './runtime-format-groups.js';
import { withExtensions, type MutableExtensions } from './with-extensions.js';

const ALL_NBITS = [1, 2, 3, 4, 8];

/**
 * The kvscope extensions beyond transformers (app/cache/cache-extensions.ts), in a group of their
 * own that starts collapsed: every knob is off by default, and the summary line names the active
 * ones so nobody mistakes them for transformers' behaviour. The preflight below checks them, with
 * transformers-style messages, as they are edited.
 */
export function ExtensionsFields({ disabled }: { disabled: boolean }): ReactNode {
  const { store } = useServices();
  const { q, numLayers } = useWorkbench((s) => ({ q: s.form.quantization, numLayers: s.model.summary?.config?.geometry.numLayers }));
  const ids = { key: useId(), value: useId(), rotation: useId(), formatKey: useId(), formatValue: useId() };
  const ext: CacheExtensions = q.extensions ?? {};
  const active = activeExtensions(q, numLayers);

  const change = (patch: Partial<MutableExtensions>): void => {
    store.setState((state) => ({ form: { ...state.form, quantization: withExtensions(state.form.quantization, { ...state.form.quantization.extensions, ...patch }) } }));
  };
  const bitsSelect = (id: string, label: string, value: number | undefined, key: 'nbitsKey' | 'nbitsValue', testId: string): ReactNode => (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value ?? ''} onChange={(event) => change({ [key]: event.target.value === '' ? undefined : Number(event.target.value) })} data-testid={testId}>
        <option value="">= bits ({q.nbits})</option>
        {ALL_NBITS.map((n) => <option key={n} value={n}>{n}</option>)}
      </select>
    </div>
  );

  const formatSelect = (id: string, label: string, value: string | undefined, pick: (name: string | undefined) => void, testId: string): ReactNode => (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value ?? ''} onChange={(event) => pick(event.target.value === '' ? undefined : event.target.value)} data-testid={testId}>
        <option value="">transformers' QuantizedCache</option>
        {RUNTIME_GROUPS.map(([runtime, formats]) => (
          <optgroup key={runtime} label={runtime}>
            {formats.map((format) => <option key={format.name} value={format.name} title={format.description}>{format.name}</option>)}
          </optgroup>
        ))}
      </select>
    </div>
  );

  return (
    <details className="extensions" data-testid="extensions-fields">
      <summary>
        {EXTENSIONS_HEADING}{' '}
        <span className="muted" data-testid="extensions-active">{active.length === 0 ? '(none active)' : `(${active.map((item) => item.label).join(', ')})`}</span>
      </summary>
      <fieldset disabled={disabled}>
        <legend className="visually-hidden">{EXTENSIONS_HEADING}</legend>
        <small className="hint block">Off by default; at their neutral values a run is bit-identical to transformers' QuantizedCache.</small>
        <div className="grid-2">
          {bitsSelect(ids.key, 'Key bits', ext.nbitsKey, 'nbitsKey', 'nbits-key-select')}
          {bitsSelect(ids.value, 'Value bits', ext.nbitsValue, 'nbitsValue', 'nbits-value-select')}
          <NumberField label="Sink tokens" value={ext.sinkTokens ?? 0} min={0} onCommit={(sinkTokens) => change({ sinkTokens: sinkTokens === 0 ? undefined : sinkTokens })} testId="sink-tokens-input" hint="first tokens kept in full precision, never re-quantized" />
          <NumberField label="Outlier quantile" value={ext.outlierQuantile ?? 0} integer={false} min={0} max={0.999999} onCommit={(quantile) => change({ outlierQuantile: quantile === 0 ? undefined : quantile })} testId="outliers-input" hint="0 = off; 0.99 keeps the top 1% exactly" />
          <NumberField label="Full-precision first layers" value={ext.fullPrecisionFirstLayers ?? 0} min={0} onCommit={(n) => change({ fullPrecisionFirstLayers: n === 0 ? undefined : n })} testId="fp-first-input" />
          <NumberField label="Full-precision last layers" value={ext.fullPrecisionLastLayers ?? 0} min={0} onCommit={(n) => change({ fullPrecisionLastLayers: n === 0 ? undefined : n })} testId="fp-last-input" />
        </div>
        <div className="grid-2" data-testid="kv-format-fields">
          {formatSelect(ids.formatKey, 'Key format (runtime)', ext.kvFormatKey, (name) => change(name === undefined
            ? { kvFormatKey: undefined, kvFormatValue: undefined, calculateKvScales: undefined }
            : { kvFormatKey: name, kvFormatValue: ext.kvFormatValue ?? name }), 'kv-format-key-select')}
          {formatSelect(ids.formatValue, 'Value format (runtime)', ext.kvFormatValue, (name) => change(name === undefined
            ? { kvFormatKey: undefined, kvFormatValue: undefined, calculateKvScales: undefined }
            : { kvFormatValue: name, kvFormatKey: ext.kvFormatKey ?? name }), 'kv-format-value-select')}
        </div>
        {ext.kvFormatKey !== undefined && (
          <small className="hint block" data-testid="kv-format-hint">
            A serving runtime's write-once cache replaces transformers' store, residual and flushes; the preflight below says what each runtime refuses for this model.
          </small>
        )}
        <div className="field">
          <label htmlFor={ids.rotation}>Rotation</label>
          <select id={ids.rotation} value={ext.rotation ?? ''} onChange={(event) => change({ rotation: event.target.value === '' ? undefined : 'hadamard', ...(event.target.value === '' ? { rotateValues: undefined } : {}) })} data-testid="rotation-select">
            <option value="">none</option>
            <option value="hadamard">Hadamard along head_dim (keys)</option>
          </select>
          <label className="check">
            <input type="checkbox" disabled={ext.rotation === undefined} checked={ext.rotateValues === true} onChange={(event) => change({ rotateValues: event.target.checked ? true : undefined })} data-testid="rotate-values-toggle" />
            <span>Rotate values too</span>
          </label>
        </div>
        <LayerMapEditor disabled={disabled} />
        {active.length > 0 && (
          <ul className="hint" data-testid="extensions-list">
            {active.map((item) => <li key={item.id}><strong>{item.label}</strong>: {item.detail}</li>)}
          </ul>
        )}
      </fieldset>
    </details>
  );
}
