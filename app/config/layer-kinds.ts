/**
 * Layer-type strings (spec §2.3) and what kvscope knows about each: whether the layer keeps a KV
 * cache at all. The vocabulary is transformers' `ALLOWED_LAYER_TYPES` plus the legacy strings
 * `"mamba"` and `"attention"` that older hybrid configs use.
 */
export const FULL_ATTENTION = 'full_attention';

/** `_LEGACY_LAYER_TYPE_REMAP` (spec §2.3), applied by Qwen3-Next and NemotronH to user-given lists. */
const LEGACY_LAYER_TYPE_REMAP: Readonly<Record<string, string>> = { mamba: 'linear_attention', attention: 'full_attention' };

export function remapLegacyLayerTypes(types: readonly string[]): string[] {
  return types.map((type) => LEGACY_LAYER_TYPE_REMAP[type] ?? type);
}

/** Layers that attend over cached keys and values (each has a KV cache of its own). */
const KV_CACHE_KINDS: ReadonlySet<string> = new Set([
  'full_attention', 'sliding_attention', 'chunked_attention', 'hybrid', 'hybrid_sliding',
  'compressed_sparse_attention', 'heavily_compressed_attention', 'deepseek_sparse_attention', 'minimax_m3_sparse',
]);

/** Layers with no KV cache: convolution state (LFM2), recurrent state (mamba, linear attention), MLP-only blocks. */
const NO_KV_CACHE_KINDS: ReadonlySet<string> = new Set(['conv', 'linear_attention', 'mamba', 'moe', 'mlp']);

/**
 * Whether a layer of this kind keeps a KV cache. Unknown strings are assumed to attend (and so to
 * have one): transformers refuses them in `QuantizedCache` anyway, and kvscope keeps them unquantized.
 */
export function kindHasKvCache(kind: string): boolean {
  if (NO_KV_CACHE_KINDS.has(kind)) return false;
  return true;
}

/** Whether kvscope knows the kind (a transformers layer type, or the legacy "mamba"). */
export function isKnownKind(kind: string): boolean {
  return KV_CACHE_KINDS.has(kind) || NO_KV_CACHE_KINDS.has(kind);
}

/** kvscope's name for what a layer is: the legacy `"attention"` is full attention. */
export function normalizedKind(type: string): string {
  return type === 'attention' ? FULL_ATTENTION : type;
}
