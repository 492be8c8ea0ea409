import type { KvPairGeometry } from '../cache/kv-geometry.js';
import { slabCount } from '../cache/kv-geometry.js';
import { layerMemory, type LayerMemory } from '../cache/layer-memory.js';
import { runtimeFormat } from '../quant/runtime-formats/registry.js';
import { bytesPerElement } from '../tensor/kv-tensor.js';

/**
 * A layer stored in serving runtimes' write-once formats (`--kv-format`, issue 27), as
 * app/cache/write-once-layer.ts counts it: every token's K and V rows in the formats' bytes
 * (`codeBytes`: slabs · tokens · (rowBytes(K) + rowBytes(V))), each side's per-tensor scale once
 * (`metadataBytes`: tensorBytes(K) + tensorBytes(V)); no residual and no flush. Throws the runtime's
 * refusal for this head_dim, as the cache would.
 */
export function runtimeFormatLayerMemory(keyFormatName: string | null, valueFormatName: string | null, geometry: KvPairGeometry, tokens: number): LayerMemory {
  // null: that side kept in full precision (a layer map's or the lab's `full` side), its rows in T as WriteOnceLayer keeps them
  const keyFormat = keyFormatName === null ? null : runtimeFormat(keyFormatName);
  const valueFormat = valueFormatName === null ? null : runtimeFormat(valueFormatName);
  const keyGeometry = { headDim: geometry.key.headDim, dtype: geometry.key.dtype, side: 'key' as const };
  const valueGeometry = { headDim: geometry.value.headDim, dtype: geometry.value.dtype, side: 'value' as const };
  const refusal = keyFormat?.refusal(keyGeometry) ?? valueFormat?.refusal(valueGeometry) ?? null;
  if (refusal !== null) throw new Error(refusal);
  // An empty layer holds nothing, per-tensor scales included (WriteOnceLayer creates its stores on the first update).
  if (tokens === 0) return layerMemory({ geometry, quantizedTokens: 0, fullPrecisionTokens: 0, stores: [], workingBytes: 0 });
  const slabs = slabCount(geometry.key);
  const valueCount = slabs * tokens * (geometry.key.headDim + geometry.value.headDim);
  const codeBytes = slabs * tokens * ((keyFormat?.rowBytes(keyGeometry) ?? 0) + (valueFormat?.rowBytes(valueGeometry) ?? 0));
  const metadataBytes = (keyFormat?.tensorBytes ?? 0) + (valueFormat?.tensorBytes ?? 0);
  const exactWidth = (keyFormat === null ? geometry.key.headDim : 0) + (valueFormat === null ? geometry.value.headDim : 0);
  const fullPrecisionBytes = slabs * tokens * exactWidth * bytesPerElement(geometry.key.dtype);
  return {
    tokens, quantizedTokens: tokens, fullPrecisionTokens: 0, valueCount, codeBytes, metadataBytes, fullPrecisionBytes,
    totalBytes: codeBytes + metadataBytes + fullPrecisionBytes, fp16BaselineBytes: valueCount * 2, fp32BaselineBytes: valueCount * 4, workingBytes: 0,
  };
}
