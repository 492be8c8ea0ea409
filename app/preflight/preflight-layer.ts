import type { LayerPolicy } from '../cache/cache-config.js';
import type { GlobalBits } from '../cache/cache-extensions.js';
import { planCacheLayers } from '../cache/layer-plan.js';
import type { ModelConfig } from '../config/model-config.js';

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

/** The layers with the cache plan a run would build (app/cache/layer-plan.ts). */
export function planPreflightLayers(config: ModelConfig, policy: LayerPolicy, bits?: GlobalBits): PreflightLayer[] {
  const plan = planCacheLayers(config.layers.layers, policy, bits);
  return config.layers.layers.map((layer, index) => ({ ...layer, quantized: plan[index] === 'quantized' }));
}
