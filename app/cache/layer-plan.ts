import { FULL_ATTENTION } from '../config/layer-kinds.js';
import type { LayerPolicy } from './cache-config.js';
import { isFullPrecisionLayer, type GlobalBits } from './cache-extensions.js';

/** What each decoder layer gets: a quantized cache, a full-precision one, or none (no KV state). */
export type CacheLayerPlan = 'quantized' | 'dynamic' | 'none';

/** A decoder layer as the plan reads it: app/config's `ConfigLayer` (layer-types.ts) has these fields. */
export interface PlannedLayer {
  /** what the layer really is (Jamba's mamba layers are "mamba" where transformers says full_attention) */
  readonly actualKind: string;
  /** false for layers without KV state (mamba, conv, linear attention, MLP-only) and shared-KV layers */
  readonly hasKvCache: boolean;
}

/**
 * The one place that decides each layer's cache under a layer policy; the preflight, the engine and
 * the renderer's memory what-if all read it.
 * - A layer without a KV cache of its own gets none.
 * - `all` quantizes every other layer, as transformers V4.56 does. V5 refuses models with any
 *   non-full-attention type; that verdict is the preflight's, not the plan's.
 * - `full-attention-only` quantizes full attention and keeps every other layer full precision,
 *   including types kvscope does not know (app/config/layer-kinds.ts assumes those attend).
 * - `bits` (the settings, with their kvscope extensions): a layer the layer map or the first/last-N
 *   shorthands keep in full precision gets a dynamic cache (cache-extensions.ts).
 */
export function planCacheLayers(layers: readonly PlannedLayer[], policy: LayerPolicy, bits?: GlobalBits): CacheLayerPlan[] {
  return layers.map((layer, index) => {
    if (!layer.hasKvCache) return 'none';
    if (bits?.extensions !== undefined && isFullPrecisionLayer(bits, index, layers.length)) return 'dynamic';
    return policy === 'all' || layer.actualKind === FULL_ATTENTION ? 'quantized' : 'dynamic';
  });
}

/** A full-precision run: every layer with a KV cache of its own gets a dynamic one. */
export function planDynamicLayers(layers: readonly PlannedLayer[]): CacheLayerPlan[] {
  return layers.map((layer) => (layer.hasKvCache ? 'dynamic' : 'none'));
}
