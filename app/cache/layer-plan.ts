import { CacheError } from '../errors.js';
import type { LayerPolicy } from './cache-config.js';

/** What each decoder layer gets: a quantized cache, a full-precision one, or none (no KV state). */
export type CacheLayerPlan = 'quantized' | 'dynamic' | 'none';

/** Full attention, including the legacy `"attention"` that `remap_legacy_layer_types` maps to it (spec §2.3). */
const FULL_ATTENTION_TYPES: ReadonlySet<string> = new Set(['full_attention', 'attention']);

/** Other layer types that attend over cached keys and values (spec §2.3). */
const OTHER_ATTENTION_TYPES: ReadonlySet<string> = new Set([
  'sliding_attention', 'chunked_attention', 'compressed_sparse_attention', 'heavily_compressed_attention',
  'deepseek_sparse_attention', 'minimax_m3_sparse', 'hybrid', 'hybrid_sliding',
]);

/** Layer types with no KV cache: convolution, linear attention / mamba state, MLP-only blocks (spec §2.3, §2.4). */
const NO_KV_TYPES: ReadonlySet<string> = new Set(['conv', 'linear_attention', 'mamba', 'moe', 'mlp']);

/**
 * Maps derived layer types (spec §2.2) to a cache plan.
 * - `all` quantizes every layer that has a KV cache, as transformers V4.56 does. V5 refuses models
 *   with any non-full-attention type; that verdict is the preflight's, not the cache's.
 * - `full-attention-only` quantizes full attention and keeps every other attention type full precision.
 */
export function planCacheLayers(layerTypes: readonly string[], policy: LayerPolicy): CacheLayerPlan[] {
  return layerTypes.map((type, index) => {
    if (NO_KV_TYPES.has(type)) return 'none';
    if (FULL_ATTENTION_TYPES.has(type)) return 'quantized';
    if (OTHER_ATTENTION_TYPES.has(type)) return policy === 'all' ? 'quantized' : 'dynamic';
    throw new CacheError(
      `layer ${index} has layer type "${type}", which kvscope cannot place in a cache. Known types: ` +
      `${[...FULL_ATTENTION_TYPES, ...OTHER_ATTENTION_TYPES, ...NO_KV_TYPES].join(', ')}.`,
    );
  });
}
