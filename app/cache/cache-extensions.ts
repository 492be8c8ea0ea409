/**
 * The knobs beyond transformers' `QuantizedCache` (issue 13), as one settings object. Every field is
 * optional and absent means transformers' behaviour; at its neutral value (nbitsKey = nbitsValue =
 * nbits, sinkTokens 0, no rotation, no outliers, a layer map equal to the global bits) a run is bit
 * for bit the transformers one (tests prove it). These are **kvscope extensions**: the CLI help,
 * the run panel and the run record name each active one as such.
 *
 * Validation lives in one place, `extension-problems.ts`; the cache applies the knobs through its
 * seams (`quantization-plan.ts` per layer and side, `extended-side-codec.ts` for sinks, rotation and
 * outliers, `layer-plan.ts` for full-precision layers), never by branches inside QuantizedLayer.
 */
export interface CacheExtensions {
  /** bits of the keys' codes; absent: `nbits` (KIVI's k_bits, mlx-lm #1074/#1550) */
  readonly nbitsKey?: number;
  /** bits of the values' codes; absent: `nbits` */
  readonly nbitsValue?: number;
  /** per-layer bits or full precision (KVTuner's presets); layers not listed use the global bits */
  readonly layerMap?: LayerMap;
  /** the first N decoder layers keep a full-precision cache (ik_llama.cpp's first/last-N K/V types) */
  readonly fullPrecisionFirstLayers?: number;
  /** the last N decoder layers keep a full-precision cache */
  readonly fullPrecisionLastLayers?: number;
  /** each layer's first S tokens stay in full precision and are never re-quantized (KVQuant's first-few-fp16, IntactKV) */
  readonly sinkTokens?: number;
  /** an orthonormal rotation along head_dim before quantizing the keys, undone after dequantizing */
  readonly rotation?: RotationKind;
  /** rotate the values too (needs `rotation`) */
  readonly rotateValues?: boolean;
  /** values above this per-layer magnitude quantile (0 < Q < 1) are kept exactly in a sparse list (KVQuant) */
  readonly outlierQuantile?: number;
  /**
   * A serving runtime's write-once KV format for the keys (issue 27; a name from
   * app/quant/runtime-formats/registry.ts): each row is stored in the runtime's bytes when written,
   * in place of the backend's store, residual and flushes (write-once-layer.ts). Set with `kvFormatValue`.
   */
  readonly kvFormatKey?: string;
  /** the values' runtime format; set with `kvFormatKey` (`--kv-format F` sets both) */
  readonly kvFormatValue?: string;
  /** vLLM's --calculate-kv-scales: FP8's per-tensor scales computed from the prefill, not 1.0 (needs a format that has one) */
  readonly calculateKvScales?: boolean;
}

export type RotationKind = 'hadamard';
export const ROTATION_KINDS: readonly RotationKind[] = ['hadamard'];

/**
 * One side's bits in a layer map: a number of bits, or `full`, that side kept in full precision while
 * the other is quantized (a kvscope extension; the lab's keys-only/values-only sensitivity plans).
 */
export type SideBits = number | 'full';

/**
 * One layer's entry in a layer map: its own K and V bits (either may be `full`), or a full-precision
 * cache. A side may instead be stored in a serving runtime's write-once format (`formatKey`/`formatValue`,
 * `llama.cpp:q8_0`, spelled as `--kv-format` spells it; a kvscope extension): that side then carries no
 * bits (layerBits gives the global bits for the backend's checks, so its result stays total).
 */
export type LayerMapEntry = QuantizedLayerEntry | { readonly layer: number; readonly fullPrecision: true };

/** A quantized layer's entry: each side its bits or its runtime format, never both. */
export type QuantizedLayerEntry = { readonly layer: number } & KeySide & ValueSide;
type KeySide = { readonly nbitsKey: SideBits; readonly formatKey?: undefined } | { readonly formatKey: string; readonly nbitsKey?: undefined };
type ValueSide = { readonly nbitsValue: SideBits; readonly formatValue?: undefined } | { readonly formatValue: string; readonly nbitsValue?: undefined };

/** One side as given: its runtime format where it has one (then it carries no bits), else its bits. */
export type EntrySide = { readonly format: string } | { readonly bits: SideBits };

/** A quantized layer's entry from its two sides (the layer map's reader, its schema and resolvedLayerMap build it so). */
export function quantizedLayerEntry(layer: number, key: EntrySide, value: EntrySide): QuantizedLayerEntry {
  const keySide: KeySide = 'format' in key ? { formatKey: key.format } : { nbitsKey: key.bits };
  const valueSide: ValueSide = 'format' in value ? { formatValue: value.format } : { nbitsValue: value.bits };
  return { layer, ...keySide, ...valueSide };
}

/** Entries in ascending layer order, one per layer at most (layer-map.ts reads and writes them). */
export type LayerMap = readonly LayerMapEntry[];

/**
 * What one decoder layer gets once every knob is applied: K and V bits (one side may be `full`), or
 * full precision (both sides full is always spelled so: that layer gets a dynamic cache).
 */
export type LayerBits = { readonly key: SideBits; readonly value: SideBits } | 'full-precision';

export interface GlobalBits {
  readonly nbits: number;
  readonly extensions?: CacheExtensions | undefined;
}

/**
 * A layer's bits: the first/last-N shorthands win, then the layer map, then `nbitsKey`/`nbitsValue`,
 * then `nbits` (transformers' one value for every layer and both tensors).
 */
export function layerBits(settings: GlobalBits, layer: number, numLayers: number): LayerBits {
  const ext = settings.extensions;
  if (ext !== undefined && isShorthandFullPrecision(ext, layer, numLayers)) return 'full-precision';
  const entry = ext?.layerMap?.find((item) => item.layer === layer);
  if (entry !== undefined) {
    if ('fullPrecision' in entry || (entry.nbitsKey === 'full' && entry.nbitsValue === 'full')) return 'full-precision';
    // a runtime-format side has no bits: the global bits keep the backend's checks of this layer as they were
    return {
      key: entry.formatKey !== undefined ? ext?.nbitsKey ?? settings.nbits : entry.nbitsKey,
      value: entry.formatValue !== undefined ? ext?.nbitsValue ?? settings.nbits : entry.nbitsValue,
    };
  }
  return { key: ext?.nbitsKey ?? settings.nbits, value: ext?.nbitsValue ?? settings.nbits };
}

function isShorthandFullPrecision(ext: CacheExtensions, layer: number, numLayers: number): boolean {
  const first = ext.fullPrecisionFirstLayers ?? 0;
  const last = ext.fullPrecisionLastLayers ?? 0;
  return layer < first || layer >= numLayers - last;
}

/** Whether the knobs keep this layer in full precision (the cache plan gives it a dynamic layer). */
export function isFullPrecisionLayer(settings: GlobalBits, layer: number, numLayers: number): boolean {
  return layerBits(settings, layer, numLayers) === 'full-precision';
}

/**
 * A quantized layer's bits as the preflight checks its quantize calls: a `full` side takes the other
 * side's bits, so a layer with one side kept exact passes exactly when it would pass with both
 * quantized (conservative: the checks never let through what the quantized side would refuse).
 */
export function checkedBits(bits: { readonly key: SideBits; readonly value: SideBits }): { readonly key: number; readonly value: number } {
  const key = bits.key === 'full' ? bits.value : bits.key;
  const value = bits.value === 'full' ? bits.key : bits.value;
  // Both full is spelled 'full-precision' by layerBits; 8 only keeps the type total.
  return { key: key === 'full' ? 8 : key, value: value === 'full' ? 8 : value };
}

/** The knobs that make a side's quantize call differ from the backend's own (side-codec.ts). */
export interface SideExtensions {
  readonly sinkTokens: number;
  readonly rotation: RotationKind | null;
  readonly outlierQuantile: number | null;
}

export const NO_SIDE_EXTENSIONS: SideExtensions = { sinkTokens: 0, rotation: null, outlierQuantile: null };

/** The sink, rotation and outlier knobs of keys or values; null when `extensions` is absent. */
export function sideExtensions(extensions: CacheExtensions | undefined, side: 'key' | 'value'): SideExtensions | null {
  if (extensions === undefined) return null;
  const rotated = extensions.rotation !== undefined && (side === 'key' || extensions.rotateValues === true);
  return {
    sinkTokens: extensions.sinkTokens ?? 0,
    rotation: rotated ? extensions.rotation! : null,
    outlierQuantile: extensions.outlierQuantile ?? null,
  };
}

/**
 * Whether a serving runtime's write-once format (--kv-format) replaces transformers' store: the
 * backend's shape rules, residual and flushes do not apply then (write-once-layer.ts).
 */
export function usesRuntimeFormat(settings: { readonly extensions?: CacheExtensions | undefined }): boolean {
  return settings.extensions?.kvFormatKey !== undefined || settings.extensions?.kvFormatValue !== undefined || layerMapFormats(settings.extensions).length > 0;
}

/**
 * A quantized layer's runtime formats, side by side (undefined: that side is not in a runtime
 * format): the layer map's `format_key`/`format_value` for this layer, else `--kv-format*`.
 */
export function layerFormats(settings: { readonly extensions?: CacheExtensions | undefined }, layer: number): { readonly key: string | undefined; readonly value: string | undefined } {
  const ext = settings.extensions;
  const entry = ext?.layerMap?.find((item) => item.layer === layer);
  const own = entry !== undefined && !('fullPrecision' in entry) ? entry : undefined;
  return { key: own?.formatKey ?? ext?.kvFormatKey, value: own?.formatValue ?? ext?.kvFormatValue };
}

/** Whether this layer keeps any side in a runtime format (its cache layer is then a WriteOnceLayer). */
export function layerUsesRuntimeFormat(settings: { readonly extensions?: CacheExtensions | undefined }, layer: number): boolean {
  const formats = layerFormats(settings, layer);
  return formats.key !== undefined || formats.value !== undefined;
}

/** Every runtime format the layer map names, each once, in order of first use. */
export function layerMapFormats(extensions: CacheExtensions | undefined): string[] {
  const names = (extensions?.layerMap ?? []).flatMap((entry) => ('fullPrecision' in entry ? [] : [entry.formatKey, entry.formatValue])).filter((name): name is string => name !== undefined);
  return [...new Set(names)];
}
