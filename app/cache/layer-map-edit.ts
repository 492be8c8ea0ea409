import { quantizedLayerEntry, type EntrySide, type GlobalBits, type LayerMap, type LayerMapEntry } from './cache-extensions.js';

export type KvSide = 'key' | 'value';

/** What a layer the map does not set gets on each side: the global K/V bits, or `--kv-format*`'s format. */
export interface LayerDefaults {
  readonly key: EntrySide;
  readonly value: EntrySide;
}

/** One side as an edit gives it: its bits (or `full`), a runtime format, or whatever an unset layer gets. */
export type SideChoice = EntrySide | 'default';

/**
 * An edit of some layers of the plan: back to the defaults (no entry), full precision (both sides),
 * or one or both sides set (a side left out keeps what the layer has).
 */
export type LayerEdit =
  | { readonly kind: 'default' }
  | { readonly kind: 'full' }
  | { readonly kind: 'sides'; readonly key?: SideChoice; readonly value?: SideChoice };

/** The sides of a layer the map does not set, as the cache plan gives them (cache-extensions.ts layerBits/layerFormats). */
export function layerDefaults(settings: GlobalBits): LayerDefaults {
  const ext = settings.extensions;
  return {
    key: ext?.kvFormatKey !== undefined ? { format: ext.kvFormatKey } : { bits: ext?.nbitsKey ?? settings.nbits },
    value: ext?.kvFormatValue !== undefined ? { format: ext.kvFormatValue } : { bits: ext?.nbitsValue ?? settings.nbits },
  };
}

/** A map entry's two sides (a full-precision layer: both `full`). */
export function entrySides(entry: LayerMapEntry): { readonly key: EntrySide; readonly value: EntrySide } {
  if ('fullPrecision' in entry) return { key: { bits: 'full' }, value: { bits: 'full' } };
  return {
    key: entry.formatKey !== undefined ? { format: entry.formatKey } : { bits: entry.nbitsKey },
    value: entry.formatValue !== undefined ? { format: entry.formatValue } : { bits: entry.nbitsValue },
  };
}

export function sameSide(a: EntrySide, b: EntrySide): boolean {
  return 'format' in a ? 'format' in b && a.format === b.format : 'bits' in b && a.bits === b.bits;
}

/**
 * The layer map after `edit` on `layers` (the run panel's per-layer editor: one row, or a range such as
 * "0-3 → full precision" or "all → K 4 / V 2"): entries in ascending layer order, undefined when no
 * layer is set any more (the extension is then off, and the run is transformers' again).
 */
export function editLayers(map: LayerMap | undefined, layers: readonly number[], edit: LayerEdit, defaults: LayerDefaults): LayerMap | undefined {
  const byLayer = new Map<number, LayerMapEntry>((map ?? []).map((entry) => [entry.layer, entry]));
  for (const layer of layers) {
    const next = editedEntry(layer, byLayer.get(layer), edit, defaults);
    if (next === null) byLayer.delete(layer);
    else byLayer.set(layer, next);
  }
  const entries = [...byLayer.values()].sort((a, b) => a.layer - b.layer);
  return entries.length === 0 ? undefined : entries;
}

/** One layer's entry after the edit; null: the layer is unset (it gets the defaults). */
function editedEntry(layer: number, current: LayerMapEntry | undefined, edit: LayerEdit, defaults: LayerDefaults): LayerMapEntry | null {
  if (edit.kind === 'default') return null;
  if (edit.kind === 'full') return { layer, fullPrecision: true };
  const now = current === undefined ? null : entrySides(current);
  const pick = (side: KvSide, other: KvSide): EntrySide => {
    const choice = edit[side];
    if (choice === 'default') return defaults[side];
    if (choice !== undefined) return choice;
    if (now !== null) return now[side];
    // An unset layer given a runtime format on one side takes it on the other too where the default
    // is the backend's bits: one layer's cache is either a runtime's write-once layer or transformers'
    // QuantizedLayer (extension-problems.ts refuses the mix), as the panel's --kv-format selects do.
    const given = edit[other];
    if (given !== undefined && given !== 'default' && 'format' in given && !('format' in defaults[side])) return given;
    return defaults[side];
  };
  const key = pick('key', 'value');
  const value = pick('value', 'key');
  if ('bits' in key && key.bits === 'full' && 'bits' in value && value.bits === 'full') return { layer, fullPrecision: true };
  // both sides chosen back to what an unset layer gets: the layer is unset again (it follows the defaults from now on)
  const toDefault = edit.key === 'default' || edit.value === 'default';
  if (toDefault && sameSide(key, defaults.key) && sameSide(value, defaults.value)) return null;
  return quantizedLayerEntry(layer, key, value);
}
