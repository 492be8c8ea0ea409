import type { LayerPolicy } from '../cache/cache-config.js';
import type { ModelConfig } from '../config/model-config.js';
import { FULL_ATTENTION } from '../config/layer-kinds.js';

/** One decoder layer in the preflight's report. */
export interface PreflightLayer {
  readonly index: number;
  /** transformers' derived layer type (spec §2.2) */
  readonly type: string;
  /** what the layer really is; differs from `type` for Jamba/Bamba mamba layers, NemotronH/Zamba mamba */
  readonly actualKind: string;
  readonly hasKvCache: boolean;
  /** reads an earlier layer's KV cache (num_kv_shared_layers) */
  readonly sharesKv: boolean;
  /** whether the cache would quantize this layer under the layer policy */
  readonly quantized: boolean;
}

/**
 * Which layers the policy quantizes: `all` every layer with a KV cache (what transformers would build
 * once its type check passes), `full-attention-only` the layers that really are full attention.
 */
export function planPreflightLayers(config: ModelConfig, policy: LayerPolicy): PreflightLayer[] {
  return config.layers.layers.map((layer) => ({
    ...layer,
    quantized: layer.hasKvCache && (policy === 'all' || layer.actualKind === FULL_ATTENTION),
  }));
}
