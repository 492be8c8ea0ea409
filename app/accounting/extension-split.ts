import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { KvPairGeometry } from '../cache/kv-geometry.js';
import { slabCount } from '../cache/kv-geometry.js';
import type { ExtensionMemory } from '../cache/layer-memory.js';
import { outlierBytes, outlierCount } from '../quant/outliers.js';
import { bytesPerElement } from '../tensor/kv-tensor.js';

/** How a quantized layer's last quantize call splits under the kvscope extensions' sink and outliers. */
export interface ExtensionSplit {
  /** rows the backend quantized: the store's tokens minus the sink */
  readonly denseTokens: number;
  /** present when the extensions hold bytes (layer-memory.ts `ExtensionMemory`) */
  readonly extensions: ExtensionMemory | undefined;
}

/**
 * The what-if's share of the extensions, from the same rules the cache applies: a sink of
 * min(S, storeTokens) rows per side (extended-side-codec.ts), ⌊(1 − Q)·n⌋ outliers of the n dense
 * values per side (outliers.ts), 4 + bytes(T) bytes each. Rotation stores nothing.
 */
export function extensionSplit(settings: QuantizedCacheSettings, geometry: KvPairGeometry, storeTokens: number): ExtensionSplit {
  const ext = settings.extensions;
  if (ext === undefined) return { denseTokens: storeTokens, extensions: undefined };
  const sinkTokens = Math.min(ext.sinkTokens ?? 0, storeTokens);
  const denseTokens = storeTokens - sinkTokens;
  const valueBytes = bytesPerElement(geometry.key.dtype);
  const sinkBytes = [geometry.key, geometry.value].reduce((sum, side) => sum + slabCount(side) * sinkTokens * side.headDim * valueBytes, 0);
  const quantile = ext.outlierQuantile;
  const outliers = quantile === undefined || denseTokens === 0
    ? 0
    : [geometry.key, geometry.value].reduce((sum, side) => sum + outlierCount(quantile, slabCount(side) * denseTokens * side.headDim), 0);
  const bytes = outlierBytes(outliers, valueBytes);
  return {
    denseTokens,
    extensions: { sinkTokens, sinkBytes, outliers, outlierIndexBytes: bytes.indexBytes, outlierValueBytes: bytes.valueBytes },
  };
}
