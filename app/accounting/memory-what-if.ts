import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import { layerBits, usesRuntimeFormat } from '../cache/cache-extensions.js';
import { resolveLayerSides, type SidePlan } from '../cache/cache-plan.js';
import { oneSideMemory } from '../cache/full-precision-side.js';
import type { KvPairGeometry } from '../cache/kv-geometry.js';
import { addLayerMemory, EMPTY_LAYER_MEMORY, layerMemory, type LayerMemory, type StoreBytes } from '../cache/layer-memory.js';
import { planCacheLayers, planDynamicLayers, type CacheLayerPlan } from '../cache/layer-plan.js';
import { slidingWindowMemory, slidingWindows } from '../cache/sliding-window-layer.js';
import type { ModelConfig } from '../config/model-config.js';
import type { CacheMode } from '../engine/types.js';
import type { KvDtype } from '../tensor/kv-tensor.js';
import { extensionSplit } from './extension-split.js';
import { flushState } from './flush-state.js';
import { runtimeFormatLayerMemory } from './runtime-format-bytes.js';
import { storeBytes } from './store-bytes.js';

/**
 * The memory what-if: what the cache would store at a chosen context length, per layer type, before
 * any run, by arithmetic alone (nothing allocated: a 1M-token context costs what a 1k one does).
 * Bytes come from app/cache/layer-memory.ts's `layerMemory` (the formula the engine reports with),
 * fed with each store's bytes from the backends' own layout functions (store-bytes.ts), the
 * store/residual split of the §1.3 state machine (flush-state.ts), the extensions' share
 * (extension-split.ts) and the runtime formats' rows (runtime-format-bytes.ts). The tests fill real
 * caches to N tokens and compare byte for byte.
 */
export interface WhatIfInput {
  readonly config: ModelConfig;
  readonly kvDtype: KvDtype;
  readonly cacheMode: CacheMode;
  readonly settings: QuantizedCacheSettings;
  /** tokens of the prompt, quantized at once by the prefill (spec §1.3) */
  readonly promptTokens: number;
  /** tokens in the cache: prompt + generated */
  readonly contextLength: number;
}

/** One group of layers of the same kind that get the same cache. */
export interface WhatIfRow {
  /** what the layers really are (`full_attention`, `sliding_attention`, `mamba`, …) */
  readonly kind: string;
  readonly plan: CacheLayerPlan;
  readonly layers: readonly number[];
  /**
   * the window of a full-precision sliding layer, counted as transformers' DynamicSlidingWindowLayer
   * keeps it (perLayer then holds its last window − 1 tokens, perLayer.fedBytes what the graph is fed)
   */
  readonly window: number | null;
  /** one layer's bytes; null where the layer keeps no KV cache or the backend refuses the shape */
  readonly perLayer: LayerMemory | null;
  /** the backend's refusal at this length, when there is one */
  readonly error: string | null;
}

export interface WhatIfResult {
  readonly rows: readonly WhatIfRow[];
  /** field-wise sum over every layer (sliding layers as transformers keeps them) */
  readonly total: LayerMemory;
  /** what the graph would be fed as KV inputs at this length: `total`, but every sliding layer's whole history */
  readonly fedBytes: number;
  /** tokens a quantized layer holds in its store and in its full-precision residual */
  readonly quantizedTokens: number;
  readonly residualTokens: number;
  /** residual flushes before reaching `contextLength` (single-token decoding) */
  readonly flushes: number;
}

/**
 * Context lengths above this are refused: the longest context the what-if is asked about (1M tokens,
 * where bench `accounting` times it); the arithmetic itself would hold far beyond.
 */
export const MAX_WHAT_IF_CONTEXT = 1 << 20;

export function estimateKvMemory(input: WhatIfInput): WhatIfResult {
  const { config, settings } = input;
  const contextLength = clampInteger(input.contextLength, 1, MAX_WHAT_IF_CONTEXT);
  const promptTokens = clampInteger(input.promptTokens, 1, contextLength);
  const plans = layerPlans(config, input.cacheMode, settings);
  // A runtime's write-once format (--kv-format, or the layer map's in its layers) keeps every token in
  // its bytes: no residual, no flush (write-once-layer.ts); the other quantized layers flush as transformers does.
  const formatsOf = (index: number): LayerFormatNames | null => {
    if (plans[index] !== 'quantized') return null;
    // each side as the cache plan resolves it: a format, or a `full` side beside one (WriteOnceLayer keeps it in T)
    const sides = resolveLayerSides(settings, index, plans.length);
    if (sides === null || (sides.key.kind !== 'runtime-format' && sides.value.kind !== 'runtime-format')) return null;
    const name = (side: SidePlan): string | null => (side.kind === 'runtime-format' ? side.format : null);
    return { key: name(sides.key), value: name(sides.value) };
  };
  const writeOnce = { storeTokens: contextLength, residualTokens: 0, flushes: 0 };
  const allWriteOnce = usesRuntimeFormat(settings) && plans.every((plan, index) => plan !== 'quantized' || formatsOf(index) !== null);
  const last = allWriteOnce ? writeOnce : flushState(promptTokens, settings.residualLength, contextLength - promptTokens);
  const geometry = pairGeometry(config, input.kvDtype);

  const windows = slidingWindows(config.layers.actualKinds, config.geometry);
  // kvscope extensions: a layer map or K/V bits give quantized layers their own bits (the default is nbits for all).
  const numLayers = config.layers.layers.length;
  const bitsOf = (index: number): SideBits => {
    const bits = layerBits(settings, index, numLayers);
    return bits === 'full-precision' ? { key: settings.nbits, value: settings.nbits } : bits;
  };
  const memo = new Map<string, { memory: LayerMemory | null; error: string | null }>();
  const memoryFor = (plan: CacheLayerPlan, bits: SideBits, formats: LayerFormatNames | null, window: number | null): { memory: LayerMemory | null; error: string | null } => {
    const memoKey = `${plan}/${bits.key}/${bits.value}/${formats?.key}/${formats?.value}/${window}`;
    const cached = memo.get(memoKey);
    if (cached !== undefined) return cached;
    const computed = formats !== null
      ? formatMemory(formats, geometry, writeOnce.storeTokens)
      : planMemory(plan, geometry, settings, last.storeTokens, last.residualTokens, contextLength, bits);
    // A full-precision sliding layer: what transformers' DynamicSlidingWindowLayer keeps of it.
    const kept = plan === 'dynamic' && window !== null && computed.memory !== null ? { memory: slidingWindowMemory(computed.memory, window), error: null } : computed;
    memo.set(memoKey, kept);
    return kept;
  };

  const groups = new Map<string, { kind: string; plan: CacheLayerPlan; bits: SideBits; formats: LayerFormatNames | null; window: number | null; layers: number[] }>();
  config.layers.layers.forEach((layer, index) => {
    const plan = plans[index] ?? 'none';
    const bits = bitsOf(index);
    const formats = formatsOf(index);
    const window = plan === 'dynamic' ? windows[index] ?? null : null;
    const base = plan === 'quantized' && settings.extensions !== undefined ? `${layer.actualKind}/${plan}/${bits.key}/${bits.value}/${formats?.key}/${formats?.value}` : `${layer.actualKind}/${plan}`;
    const key = `${base}/${window}`;
    const group = groups.get(key) ?? { kind: layer.actualKind, plan, bits, formats, window, layers: [] };
    group.layers.push(index);
    groups.set(key, group);
  });

  let total = EMPTY_LAYER_MEMORY;
  let fedBytes = 0;
  const rows: WhatIfRow[] = [];
  for (const group of groups.values()) {
    const { memory, error } = memoryFor(group.plan, group.bits, group.formats, group.window);
    if (memory !== null) {
      for (let i = 0; i < group.layers.length; i++) total = addLayerMemory(total, memory);
      fedBytes += group.layers.length * (memory.fedBytes ?? memory.totalBytes);
    }
    rows.push({ kind: group.kind, plan: group.plan, window: group.window, layers: group.layers, perLayer: memory, error });
  }
  const quantizing = input.cacheMode === 'quantized';
  return {
    rows,
    total,
    fedBytes,
    quantizedTokens: quantizing ? last.storeTokens : 0,
    residualTokens: quantizing ? last.residualTokens : contextLength,
    flushes: quantizing ? last.flushes : 0,
  };
}

/**
 * The plan a run would build (app/engine/plan-run-cache.ts): the layer policy over what each layer
 * really is, and no cache where the layer keeps none (mamba, conv, shared-KV layers).
 */
function layerPlans(config: ModelConfig, cacheMode: CacheMode, settings: QuantizedCacheSettings): CacheLayerPlan[] {
  const layers = config.layers.layers;
  return cacheMode === 'dynamic' ? planDynamicLayers(layers) : planCacheLayers(layers, settings.layerPolicy, settings);
}

/** A write-once layer's K and V runtime formats (the cache plan's, per layer). */
interface LayerFormatNames {
  /** null: that side kept in full precision */
  readonly key: string | null;
  readonly value: string | null;
}

/** A write-once layer as its runtime counts it, or the runtime's refusal of this geometry as the row's error. */
function formatMemory(formats: LayerFormatNames, geometry: KvPairGeometry, tokens: number): { memory: LayerMemory | null; error: string | null } {
  try {
    return { memory: runtimeFormatLayerMemory(formats.key, formats.value, geometry, tokens), error: null };
  } catch (error) {
    return { memory: null, error: error instanceof Error ? error.message : String(error) };
  }
}

/** One quantized layer's K and V bits. */
interface SideBits {
  /** 'full': the cache plan keeps this side in full precision (a layer map's `full` side, a kvscope extension) */
  readonly key: number | 'full';
  readonly value: number | 'full';
}

/** K and V of one layer: `[1, kvHeads, seq, headDim]` in the model's KV dtype. */
export function pairGeometry(config: ModelConfig, dtype: KvDtype): KvPairGeometry {
  const side = { batch: 1, kvHeads: config.geometry.numKeyValueHeads, headDim: config.geometry.headDim, dtype };
  return { key: side, value: side };
}

function planMemory(
  plan: CacheLayerPlan, geometry: KvPairGeometry, settings: QuantizedCacheSettings,
  storeTokens: number, residualTokens: number, contextLength: number, bits: SideBits,
): { memory: LayerMemory | null; error: string | null } {
  if (plan === 'none') return { memory: null, error: null };
  if (plan === 'dynamic') {
    return { memory: layerMemory({ geometry, quantizedTokens: 0, fullPrecisionTokens: contextLength, stores: [], workingBytes: 0 }), error: null };
  }
  try {
    const { denseTokens, extensions } = extensionSplit(settings, geometry, storeTokens);
    const { key, value } = bits;
    if (key === 'full' || value === 'full') {
      // One side quantized, the other in full precision: counted as QuantizedLayer counts it (full-precision-side.ts).
      const nbits = key === 'full' ? value : key;
      if (nbits === 'full') return planMemory('dynamic', geometry, settings, storeTokens, residualTokens, contextLength, bits);
      const quantized = key === 'full' ? 'value' : 'key';
      const [store] = storeBytesOfShape(settings, geometry, storeTokens, { key: nbits, value: nbits }).slice(quantized === 'key' ? 0 : 1);
      return { memory: oneSideMemory({ geometry, quantized, store: store ?? null, quantizedTokens: storeTokens, residualTokens, workingBytes: 0 }), error: null };
    }
    return {
      memory: layerMemory({
        geometry, quantizedTokens: denseTokens, fullPrecisionTokens: residualTokens, stores: [], storeBytes: storeBytesOfShape(settings, geometry, denseTokens, { key, value }),
        workingBytes: 0, ...(extensions !== undefined ? { extensions } : {}),
      }),
      error: null,
    };
  } catch (error) {
    return { memory: null, error: error instanceof Error ? error.message : String(error) };
  }
}

/** The key and value stores' bytes a quantized layer holds for `tokens` quantized tokens (none for 0); `bits`: K and V bits (default nbits). */
export function storeBytesOfShape(settings: QuantizedCacheSettings, geometry: KvPairGeometry, tokens: number, bits?: { readonly key: number; readonly value: number }): StoreBytes[] {
  if (tokens === 0) return [];
  const { key, value } = geometry;
  return [
    storeBytes({ ...settings, nbits: bits?.key ?? settings.nbits }, settings.axisKey, key.kvHeads, tokens, key.headDim, key.dtype),
    storeBytes({ ...settings, nbits: bits?.value ?? settings.nbits }, settings.axisValue, value.kvHeads, tokens, value.headDim, value.dtype),
  ];
}

function clampInteger(value: number, min: number, max: number): number {
  if (!Number.isFinite(value)) return min;
  return Math.min(max, Math.max(min, Math.floor(value)));
}
