import { useCallback, useMemo, useState, type KeyboardEvent, type ReactNode } from 'react';
import type { LayerMap } from '../../../app/cache/cache-extensions.js';
import { editLayers, layerDefaults, type LayerEdit } from '../../../app/cache/layer-map-edit.js';
import { resolvedLayerMap } from '../../../app/cache/layer-map.js';
import { parseLayerRange } from '../../../app/cache/layer-range.js';
import { backendRules } from '../../../app/quant/backend-rules.js';
import { useServices, useWorkbench } from '../../services.js';
import { LayerMapFiles } from './LayerMapFiles.js';
import { LayerMapRow, type RowSideOptions } from './LayerMapRow.js';
import { LayerRangeBar } from './LayerRangeBar.js';
import { layerRefusals } from './layer-refusals.js';
import { withExtensions } from './with-extensions.js';

const NO_REFUSALS: readonly never[] = [];

/**
 * The per-layer cache plan (a kvscope extension, off until a layer is set): one compact row per
 * decoder layer of the open model, a range bar for bulk edits, and the plan as a KVTuner layer-map
 * file. Its state is the form's `extensions.layerMap` itself, so the run check, the what-if, the
 * layer strip and the run read exactly what is shown here; each row carries the run check's refusal
 * of that layer, in the library's or runtime's words.
 */
export function LayerMapEditor({ disabled }: { disabled: boolean }): ReactNode {
  const { store, controller } = useServices();
  const { config, quantization, diagnostics, modelName } = useWorkbench((s) => ({
    config: s.model.summary?.config ?? null, quantization: s.form.quantization,
    diagnostics: s.preflight.result?.diagnostics ?? NO_REFUSALS, modelName: s.model.summary?.displayName ?? null,
  }));
  const [range, setRange] = useState('');
  const [anchor, setAnchor] = useState<number | null>(null);
  // the row Tab enters the list at: the last one in focus (a roving tab stop, WAI-ARIA's grid pattern)
  const [focusedLayer, setFocusedLayer] = useState(0);
  const ext = quantization.extensions;
  const map = ext?.layerMap;
  const numLayers = config?.geometry.numLayers ?? 0;

  const setMap = useCallback((next: LayerMap | undefined): void => {
    store.setState((state) => ({ form: { ...state.form, quantization: withExtensions(state.form.quantization, { ...state.form.quantization.extensions, layerMap: next }) } }));
  }, [store]);
  // edits apply to the form as it is when they happen (two quick edits never undo each other)
  const edit = useCallback((layers: readonly number[], change: LayerEdit): void => {
    const settings = store.getState().form.quantization;
    setMap(editLayers(settings.extensions?.layerMap, layers, change, layerDefaults(settings)));
  }, [store, setMap]);
  const editOne = useCallback((layer: number, change: LayerEdit): void => edit([layer], change), [edit]);
  const pickLayer = useCallback((layer: number, extend: boolean): void => {
    if (extend && anchor !== null) {
      setRange(`${Math.min(anchor, layer)}-${Math.max(anchor, layer)}`);
      return;
    }
    setAnchor(layer);
    setRange(String(layer));
  }, [anchor]);

  const options = useMemo((): RowSideOptions => {
    const defaults = layerDefaults(quantization);
    const backend = String(quantization.backend);
    const bits = backendRules(backend)?.nbits ?? [];
    const ownSettings = ext?.kvFormatKey === undefined && ext?.kvFormatValue === undefined;
    return { key: { fallback: defaults.key, bits, backend, ownSettings }, value: { fallback: defaults.value, bits, backend, ownSettings } };
  }, [quantization, ext?.kvFormatKey, ext?.kvFormatValue]);
  const refusals = useMemo(() => layerRefusals(diagnostics, map), [diagnostics, map]);
  const entries = useMemo(() => new Map((map ?? []).map((entry) => [entry.layer, entry])), [map]);
  const resolved = useMemo(() => {
    if (config === null) return null;
    const withCache = new Set(config.layers.layers.flatMap((layer, index) => (layer.hasKvCache ? [index] : [])));
    return resolvedLayerMap(quantization, numLayers).filter((entry) => withCache.has(entry.layer));
  }, [config, quantization, numLayers]);
  const parsedRange = numLayers > 0 ? parseLayerRange(range, numLayers) : null;
  const selected = new Set(parsedRange !== null && 'layers' in parsedRange ? parsedRange.layers : []);
  const first = ext?.fullPrecisionFirstLayers ?? 0;
  const last = ext?.fullPrecisionLastLayers ?? 0;
  const beyond = (map ?? []).filter((entry) => config !== null && entry.layer >= numLayers);
  const refusedCount = [...refusals.keys()].filter((layer) => layer < numLayers).length;
  const policyKeepsFull = (layer: number): boolean => quantization.layerPolicy === 'full-attention-only' && config?.layers.layers[layer]?.actualKind !== 'full_attention';
  const lockedReason = (layer: number): string | null => {
    if (layer < first) return `full precision: first ${first} layers`;
    if (layer >= numLayers - last) return `full precision: last ${last} layers`;
    return policyKeepsFull(layer) ? 'full precision: the layer policy quantizes full attention only' : null;
  };
  // Tab reaches a row whose sides can be edited (not one without a KV cache, nor one kept in full precision whatever the map says)
  const editable = (layer: number): boolean => config?.layers.layers[layer]?.hasKvCache === true && lockedReason(layer) === null;
  const tabLayer = editable(focusedLayer) ? focusedLayer : (config?.layers.layers.findIndex((_, layer) => editable(layer)) ?? 0);

  return (
    <section className="layer-map-editor" aria-labelledby="layer-map-title" data-testid="layer-map-editor">
      <div className="layer-map-head">
        <h4 id="layer-map-title">Per-layer plan <span className="unit muted">(KVTuner layer map)</span></h4>
        {map !== undefined && <span className="badge badge-extension" title="Not transformers' QuantizedCache: a kvscope extension" data-testid="layer-map-badge">kvscope extension</span>}
        <small className="hint" data-testid="layer-map-summary">
          {map === undefined ? 'every layer the default' : `${map.length} layers set`}
          {map !== undefined && numLayers > 0 && `, ${Math.max(0, numLayers - map.filter((entry) => entry.layer < numLayers).length)} the default`}
          {refusedCount > 0 && <span className="error" data-testid="layer-map-refused-count">, {refusedCount} refused</span>}
          {map !== undefined && <> <button type="button" className="link-button inline" onClick={() => setMap(undefined)} disabled={disabled} data-testid="layer-map-clear">Reset all</button></>}
        </small>
      </div>
      <LayerMapFiles map={map} resolved={resolved} modelName={modelName} disabled={disabled} onLoad={setMap}
        onSave={(fileName, text) => controller.saveText(fileName, 'application/yaml', text, 'Saved the layer map')} />
      {config === null ? <p className="hint">Open a model to set its layers one by one.</p> : (
        <>
          <LayerRangeBar range={range} onRange={setRange} numLayers={numLayers} options={options} disabled={disabled} onApply={edit} />
          <div className="layer-rows-head" aria-hidden="true"><span>#</span><span>K (keys)</span><span>V (values)</span><span /></div>
          <ol className="layer-rows" aria-label={`${numLayers} decoder layers: keys and values`} data-testid="layer-rows" onKeyDown={moveBetweenRows}>
            {config.layers.layers.map((layer, index) => (
              <LayerMapRow
                key={index} layer={layer} entry={entries.get(index)} options={options}
                locked={lockedReason(index)}
                refusals={refusals.get(index) ?? NO_REFUSALS} selected={selected.has(index)} disabled={disabled} onEdit={editOne} onPickLayer={pickLayer}
                tabbable={index === tabLayer} onFocusRow={setFocusedLayer}
              />
            ))}
          </ol>
          <small className="hint block">Tab enters the list at one row, Ctrl+↑/↓ moves between rows; a row or range set to a runtime format on one side takes it on the other where that side is the default.</small>
        </>
      )}
      {beyond.length > 0 && (
        <p className="hint error" data-testid="layer-map-beyond">
          The map sets layer{beyond.length === 1 ? '' : 's'} {beyond.map((entry) => entry.layer).join(', ')}, which this model ({numLayers} layers) does not have.{' '}
          <button type="button" className="link-button inline" disabled={disabled} onClick={() => edit(beyond.map((entry) => entry.layer), { kind: 'default' })}>Drop {beyond.length === 1 ? 'it' : 'them'}</button>
        </p>
      )}
    </section>
  );
}

/** Ctrl+↑/↓ on a row's K or V select: the same side of the previous or next row (arrows alone change the select's value). */
function moveBetweenRows(event: KeyboardEvent<HTMLOListElement>): void {
  if (!(event.ctrlKey || event.metaKey) || (event.key !== 'ArrowUp' && event.key !== 'ArrowDown')) return;
  const target = event.target as HTMLElement;
  const row = target.closest('[data-layer]');
  const side = target.getAttribute('data-side');
  if (row === null || side === null) return;
  const step = event.key === 'ArrowUp' ? -1 : 1;
  let next = step < 0 ? row.previousElementSibling : row.nextElementSibling;
  while (next !== null) {
    const select = next.querySelector<HTMLSelectElement>(`select[data-side="${side}"]`);
    if (select !== null && !select.disabled) {
      event.preventDefault();
      select.focus();
      select.scrollIntoView({ block: 'nearest' });
      return;
    }
    next = step < 0 ? next.previousElementSibling : next.nextElementSibling;
  }
}
