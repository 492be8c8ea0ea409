import type { KvPairGeometry } from '../cache/kv-geometry.js';
import { slabCount } from '../cache/kv-geometry.js';
import { layerMemory, type LayerMemory } from '../cache/layer-memory.js';
import { runtimeFormat } from '../quant/runtime-formats/registry.js';

/**
 * A layer stored in serving runtimes' write-once formats (`--kv-format`, issue 27), as
 * app/cache/write-once-layer.ts counts it: every token's K and V rows in the formats' bytes
 * (`codeBytes`: slabs · tokens · (rowBytes(K) + rowBytes(V))), each side's per-tensor scale once
 * (`metadataBytes`: tensorBytes(K) + tensorBytes(V)); no residual and no flush. Throws the runtime's
 * refusal for this head_dim, as the cache would.
 */
export function runtimeFormatLayerMemory(keyFormatName: string, valueFormatName: string, geometry: KvPairGeometry, tokens: number): LayerMemory {
  const keyFormat = runtimeFormat(keyFormatName);
  const valueFormat = runtimeFormat(valueFormatName);
  const keyGeometry = { headDim: geometry.key.headDim, dtype: geometry.key.dtype, side: 'key' as const };
  const valueGeometry = { headDim: geometry.value.headDim, dtype: geometry.value.dtype, side: 'value' as const };
  const refusal = keyFormat.refusal(keyGeometry) ?? valueFormat.refusal(valueGeometry);
  if (refusal !== null) throw new Error(refusal);
  // An empty layer holds nothing, per-tensor scales included (WriteOnceLayer creates its stores on the first update).
  if (tokens === 0) return layerMemory({ geometry, quantizedTokens: 0, fullPrecisionTokens: 0, stores: [], workingBytes: 0 });
  const slabs = slabCount(geometry.key);
  const memory = layerMemory({
    geometry, quantizedTokens: tokens, fullPrecisionTokens: 0, stores: [], workingBytes: 0,
    storeBytes: [
      { codeBytes: slabs * tokens * keyFormat.rowBytes(keyGeometry), metadataBytes: keyFormat.tensorBytes },
      { codeBytes: slabs * tokens * valueFormat.rowBytes(valueGeometry), metadataBytes: valueFormat.tensorBytes },
    ],
  });
  return memory;
}
