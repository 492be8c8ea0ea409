import { bytesPerElement } from '../tensor/kv-tensor.js';
import { quantizedByteSize, type QuantizedTensor } from '../quant/types.js';
import type { KvPairGeometry } from './kv-geometry.js';

/**
 * Bytes a layer's cache holds, K and V together, as transformers stores them (spec §3.6): packed
 * codes, per-group scale and zero in the model dtype T, and full-precision tokens in T. It counts the
 * cache's storage, not kvscope's JavaScript working buffers (`workingBytes`, reported apart).
 */
export interface LayerMemory {
  /** tokens the layer has seen (`cumulative_length`), = quantizedTokens + fullPrecisionTokens */
  readonly tokens: number;
  readonly quantizedTokens: number;
  /** the quantized layer's residual, or a dynamic layer's whole history */
  readonly fullPrecisionTokens: number;
  /** values held for `tokens` tokens: B·H·tokens·(D_k + D_v) */
  readonly valueCount: number;
  /** packed codes of the quantized stores */
  readonly codeBytes: number;
  /** scale and zero (quanto: scale, shift) of every group, each in T */
  readonly metadataBytes: number;
  /** full-precision values in T: B·H·fullPrecisionTokens·(D_k + D_v)·bytes(T) */
  readonly fullPrecisionBytes: number;
  /** codeBytes + metadataBytes + fullPrecisionBytes */
  readonly totalBytes: number;
  /** the same tokens uncompressed: valueCount·2 */
  readonly fp16BaselineBytes: number;
  /** the same tokens uncompressed: valueCount·4 */
  readonly fp32BaselineBytes: number;
  /** JavaScript memory kvscope holds for this layer (history and dequantized-store buffers, capacity included) */
  readonly workingBytes: number;
  /**
   * Set for a full-precision sliding-window layer, counted as transformers' DynamicSlidingWindowLayer
   * keeps it (sliding-window-layer.ts): its window; the fields above are then the last window − 1
   * tokens transformers keeps.
   */
  readonly windowTokens?: number;
  /** with `windowTokens`: the tokens and bytes the graph is fed for this layer (its whole history) */
  readonly fedTokens?: number;
  readonly fedBytes?: number;
  /**
   * What the kvscope extensions hold, K and V together, already counted in the fields above (sink rows
   * in fullPrecisionTokens/Bytes, outlier values in fullPrecisionBytes, outlier indices in
   * metadataBytes). Present only when an extension holds bytes, so the transformers path's records
   * are unchanged.
   */
  readonly extensions?: ExtensionMemory;
}

/** Bytes of the kvscope extensions in a layer (extension-memory.ts counts them). */
export interface ExtensionMemory {
  /** tokens per side kept exactly at the front (`--sink-tokens`) */
  readonly sinkTokens: number;
  /** B·H·sinkTokens·(D_k + D_v)·bytes(T) */
  readonly sinkBytes: number;
  /** values kept exactly in the sparse lists (`--outliers`), K and V */
  readonly outliers: number;
  /** 4 bytes (uint32 position) per outlier */
  readonly outlierIndexBytes: number;
  /** bytes(T) per outlier */
  readonly outlierValueBytes: number;
}

export const EMPTY_EXTENSION_MEMORY: ExtensionMemory = { sinkTokens: 0, sinkBytes: 0, outliers: 0, outlierIndexBytes: 0, outlierValueBytes: 0 };

function holdsBytes(memory: ExtensionMemory): boolean {
  return memory.sinkTokens > 0 || memory.outliers > 0;
}

function addExtensionMemory(a: ExtensionMemory | undefined, b: ExtensionMemory | undefined): ExtensionMemory | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return {
    sinkTokens: a.sinkTokens + b.sinkTokens,
    sinkBytes: a.sinkBytes + b.sinkBytes,
    outliers: a.outliers + b.outliers,
    outlierIndexBytes: a.outlierIndexBytes + b.outlierIndexBytes,
    outlierValueBytes: a.outlierValueBytes + b.outlierValueBytes,
  };
}

export const EMPTY_LAYER_MEMORY: LayerMemory = {
  tokens: 0, quantizedTokens: 0, fullPrecisionTokens: 0, valueCount: 0, codeBytes: 0, metadataBytes: 0,
  fullPrecisionBytes: 0, totalBytes: 0, fp16BaselineBytes: 0, fp32BaselineBytes: 0, workingBytes: 0,
};

/** One quantized store's bytes, counted without the store (app/accounting/store-bytes.ts computes them by arithmetic). */
export interface StoreBytes {
  /** the packed codes */
  readonly codeBytes: number;
  /** scale and zero (quanto: scale, shift) of every group, each in the model dtype T */
  readonly metadataBytes: number;
}

export interface LayerMemoryParts {
  readonly geometry: KvPairGeometry;
  readonly quantizedTokens: number;
  readonly fullPrecisionTokens: number;
  /** the key and value stores, absent for a dynamic layer */
  readonly stores: readonly QuantizedTensor[];
  /** stores given by their bytes alone (the what-if's arithmetic), counted as `stores` are */
  readonly storeBytes?: readonly StoreBytes[];
  readonly workingBytes: number;
  /** the extensions' sink rows (per side) and outliers; sink tokens join fullPrecisionTokens */
  readonly extensions?: ExtensionMemory;
}

export function layerMemory(parts: LayerMemoryParts): LayerMemory {
  const { key, value } = parts.geometry;
  // Keys and values share batch, heads and dtype (checkUpdate); their head dims may differ.
  const valuesPerToken = key.batch * key.kvHeads * (key.headDim + value.headDim);
  const extensions = parts.extensions !== undefined && holdsBytes(parts.extensions) ? parts.extensions : undefined;
  const fullPrecisionTokens = parts.fullPrecisionTokens + (extensions?.sinkTokens ?? 0);
  const tokens = parts.quantizedTokens + fullPrecisionTokens;
  let codeBytes = 0;
  let metadataBytes = extensions?.outlierIndexBytes ?? 0;
  for (const store of parts.stores) {
    codeBytes += store.packed.byteLength;
    metadataBytes += quantizedByteSize(store) - store.packed.byteLength;
  }
  for (const store of parts.storeBytes ?? []) {
    codeBytes += store.codeBytes;
    metadataBytes += store.metadataBytes;
  }
  const fullPrecisionBytes = valuesPerToken * fullPrecisionTokens * bytesPerElement(key.dtype) + (extensions?.outlierValueBytes ?? 0);
  const valueCount = valuesPerToken * tokens;
  return {
    tokens,
    quantizedTokens: parts.quantizedTokens,
    fullPrecisionTokens,
    valueCount,
    codeBytes,
    metadataBytes,
    fullPrecisionBytes,
    totalBytes: codeBytes + metadataBytes + fullPrecisionBytes,
    fp16BaselineBytes: valueCount * 2,
    fp32BaselineBytes: valueCount * 4,
    workingBytes: parts.workingBytes,
    ...(extensions !== undefined ? { extensions } : {}),
  };
}

/** Field-wise sum, for whole-cache totals. */
export function addLayerMemory(a: LayerMemory, b: LayerMemory): LayerMemory {
  const extensions = addExtensionMemory(a.extensions, b.extensions);
  return {
    tokens: a.tokens + b.tokens,
    quantizedTokens: a.quantizedTokens + b.quantizedTokens,
    fullPrecisionTokens: a.fullPrecisionTokens + b.fullPrecisionTokens,
    valueCount: a.valueCount + b.valueCount,
    codeBytes: a.codeBytes + b.codeBytes,
    metadataBytes: a.metadataBytes + b.metadataBytes,
    fullPrecisionBytes: a.fullPrecisionBytes + b.fullPrecisionBytes,
    totalBytes: a.totalBytes + b.totalBytes,
    fp16BaselineBytes: a.fp16BaselineBytes + b.fp16BaselineBytes,
    fp32BaselineBytes: a.fp32BaselineBytes + b.fp32BaselineBytes,
    workingBytes: a.workingBytes + b.workingBytes,
    ...(extensions !== undefined ? { extensions } : {}),
  };
}

/** Storage bits per cached value (quanto int4, g 64, fp16 → 4.5; spec §3.6). 0 for an empty cache. */
export function bitsPerValue(memory: LayerMemory): number {
  return memory.valueCount === 0 ? 0 : (8 * memory.totalBytes) / memory.valueCount;
}

/** The whole cache's bytes: the sum over layers, skipping those that keep no KV cache (null). */
export function sumLayerMemory(layers: readonly (LayerMemory | null)[]): LayerMemory {
  let sum = EMPTY_LAYER_MEMORY;
  for (const layer of layers) if (layer !== null) sum = addLayerMemory(sum, layer);
  return sum;
}
