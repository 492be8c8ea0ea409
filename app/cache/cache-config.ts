import type { QuantBackend } from '../quant/types.js';
import type { CacheExtensions } from './cache-extensions.js';

/**
 * Which layers a quantized cache quantizes.
 * - `all`: transformers' behaviour; a model with any non-full-attention layer is refused.
 * - `full-attention-only`: kvscope's extension; full-attention layers are quantized, the others keep a
 *   full-precision (dynamic) cache or, for layers without a KV cache (mamba, conv), none at all.
 */
export type LayerPolicy = 'all' | 'full-attention-only';

/** The arguments of transformers' `QuantizedCache(backend, config, nbits, axis_key, axis_value, q_group_size, residual_length)`. */
export interface QuantizedCacheSettings {
  readonly backend: QuantBackend | string;
  readonly nbits: number;
  readonly axisKey: number;
  readonly axisValue: number;
  readonly groupSize: number;
  readonly residualLength: number;
  readonly layerPolicy: LayerPolicy;
  /** kvscope extensions beyond transformers (cache-extensions.ts); absent: transformers' QuantizedCache exactly */
  readonly extensions?: CacheExtensions;
}

/** transformers' defaults (spec §1.1); `generate()` supplies backend "quanto". */
export const DEFAULT_QUANTIZED_CACHE_SETTINGS: QuantizedCacheSettings = {
  backend: 'quanto',
  nbits: 4,
  axisKey: 0,
  axisValue: 0,
  groupSize: 64,
  residualLength: 128,
  layerPolicy: 'all',
};
