import { ConfigError } from '../errors.js';
import { actualLayerKinds } from './actual-layer-kinds.js';
import { optionalBoolean, optionalInteger, optionalStringList, requiredPositiveInteger } from './config-fields.js';
import { modelTypeOf, type ConfigObject } from './config-object.js';
import { familyLayerTypes, remapsLegacyLayerTypes } from './family-layer-rules.js';
import { isKnownKind, kindHasKvCache, remapLegacyLayerTypes } from './layer-kinds.js';
import { nemotronHLayerTypes } from './nemotron-h-layer-types.js';

/** Where transformers' list came from (spec §2.2 step 1, §2.4). */
export type LayerTypeSource =
  | 'config'
  | 'family-rule'
  | 'fallback-sliding-window'
  | 'fallback-attention-chunk-size'
  | 'fallback-full-attention';

/** One decoder layer as kvscope sees it. */
export interface ConfigLayer {
  readonly index: number;
  /** transformers' derived type for this layer (before the num_kv_shared_layers truncation) */
  readonly type: string;
  /** what the layer really is (e.g. Jamba's "mamba" where transformers says full_attention) */
  readonly actualKind: string;
  /** whether the layer keeps a KV cache of its own */
  readonly hasKvCache: boolean;
  /** one of the last num_kv_shared_layers layers, which read an earlier layer's KV cache */
  readonly sharesKv: boolean;
}

export interface LayerTypeDerivation {
  /** `config.num_hidden_layers`: the number of layers QuantizedCache builds (spec §1.2 step 5) */
  readonly numLayers: number;
  /** transformers' derived type per layer, length numLayers */
  readonly allLayerTypes: readonly string[];
  /** what `get_layer_types_and_kwargs` returns and QuantizedCache validates: allLayerTypes minus the shared tail */
  readonly layerTypes: readonly string[];
  readonly source: LayerTypeSource;
  /** how the list was obtained, citing the spec */
  readonly rule: string;
  readonly layers: readonly ConfigLayer[];
  /** `layers[i].actualKind`: the per-layer list to plan a cache from (shared-KV layers: see `layers[i].sharesKv`) */
  readonly actualKinds: readonly string[];
  /** `config.sliding_window` after the family's `__init__` (Qwen2 without use_sliding_window → null) */
  readonly slidingWindow: number | null;
  readonly attentionChunkSize: number | null;
  readonly numKvSharedLayers: number;
  /** where kvscope and transformers see the model differently, or a config oddity */
  readonly notes: readonly string[];
}

const LAYER_COUNT_FIX =
  'Add "num_hidden_layers": <number of decoder layers> to config.json (an ONNX decoder has one past_key_values.<i>.key input per layer).';

interface TransformersList {
  readonly numLayers: number;
  readonly types: readonly string[];
  readonly source: LayerTypeSource;
  readonly rule: string;
  readonly notes: readonly string[];
}

/**
 * Layer types exactly as transformers derives them for `QuantizedCache` (spec §2.2), from the text
 * config (`get_text_config(decoder=True)`, with class defaults filled in), plus kvscope's view of what
 * each layer actually is.
 */
export function deriveLayerTypes(config: ConfigObject, where: string): LayerTypeDerivation {
  const modelType = modelTypeOf(config);
  const slidingWindow = effectiveSlidingWindow(config, modelType, where);
  const attentionChunkSize = optionalInteger(config, 'attention_chunk_size', where);
  const list = transformersList(config, modelType, slidingWindow, attentionChunkSize, where);

  const sharedCount = Math.max(0, optionalInteger(config, 'num_kv_shared_layers', where) ?? 0);
  // Python's `layer_types[:-k]`: the last k entries go; k >= N leaves an empty list.
  const layerTypes = sharedCount > 0 ? list.types.slice(0, Math.max(0, list.types.length - sharedCount)) : list.types;
  const firstShared = list.numLayers - sharedCount;

  const actual = actualLayerKinds(config, modelType, list.types, where);
  const layers = list.types.map((type, index): ConfigLayer => {
    const actualKind = actual.kinds[index] ?? type;
    const sharesKv = sharedCount > 0 && index >= firstShared;
    return { index, type, actualKind, hasKvCache: !sharesKv && kindHasKvCache(actualKind), sharesKv };
  });

  const unknown = [...new Set(layers.map((layer) => layer.actualKind))].filter((kind) => !isKnownKind(kind));
  const notes = [
    ...list.notes,
    ...(actual.note !== null ? [actual.note] : []),
    ...(unknown.length > 0 ? [`kvscope does not know the layer type(s) ${unknown.join(', ')}; it assumes they keep a KV cache (kept unquantized under full-attention-only).`] : []),
  ];
  return {
    numLayers: list.numLayers,
    allLayerTypes: list.types,
    layerTypes,
    source: list.source,
    rule: list.rule,
    layers,
    actualKinds: layers.map((layer) => layer.actualKind),
    slidingWindow,
    attentionChunkSize,
    numKvSharedLayers: sharedCount,
    notes,
  };
}

/** `config.sliding_window` as the family's `__init__` leaves it (spec §2.4). */
function effectiveSlidingWindow(config: ConfigObject, modelType: string | undefined, where: string): number | null {
  const slidingWindow = optionalInteger(config, 'sliding_window', where);
  if (modelType === 'qwen2' || modelType === 'qwen3') {
    return optionalBoolean(config, 'use_sliding_window', where) === true ? slidingWindow : null;
  }
  if (modelType === 'gemma3_text' && slidingWindow !== null && optionalBoolean(config, 'use_bidirectional_attention', where) === true) {
    return Math.floor(slidingWindow / 2) + 1;
  }
  return slidingWindow;
}

function transformersList(
  config: ConfigObject, modelType: string | undefined, slidingWindow: number | null, attentionChunkSize: number | null, where: string,
): TransformersList {
  if (modelType === 'nemotron_h') return nemotronHList(config, where);

  const numLayers = requiredPositiveInteger(config, 'num_hidden_layers', where, LAYER_COUNT_FIX);
  const given = optionalStringList(config, 'layer_types', where);
  if (given !== null) {
    const types = remapsLegacyLayerTypes(modelType) ? remapLegacyLayerTypes(given) : given;
    checkLength(types, numLayers, where);
    const notes = modelType === 'mistral'
      ? ['config.json gives a Mistral model layer_types; transformers keeps them but warns "Detected Mistral model with layer_types. Consider using AutoModel or Ministral classes instead…".']
      : [];
    const rule = /genai_config\.json/.test(where)
      ? 'layer_types from genai_config.json (model.decoder.layer_types, as config.json would give them)'
      : 'layer_types from config.json';
    return { numLayers, types, source: 'config', rule, notes };
  }

  const family = familyLayerTypes(modelType, { config, numLayers, slidingWindow, where });
  if (family !== null) {
    checkLength(family.types, numLayers, where);
    return { numLayers, types: family.types, source: 'family-rule', rule: family.rule, notes: family.notes };
  }
  return fallbackLadder(numLayers, slidingWindow, attentionChunkSize);
}

/** Spec §2.2 step 1: the value matters, not the key: `"sliding_window": null` means full attention. */
function fallbackLadder(numLayers: number, slidingWindow: number | null, attentionChunkSize: number | null): TransformersList {
  if (slidingWindow !== null) {
    return {
      numLayers, types: Array<string>(numLayers).fill('sliding_attention'), source: 'fallback-sliding-window', notes: [],
      rule: `no layer_types: sliding_window is ${slidingWindow}, so every layer is sliding_attention`,
    };
  }
  if (attentionChunkSize !== null) {
    return {
      numLayers, types: Array<string>(numLayers).fill('chunked_attention'), source: 'fallback-attention-chunk-size', notes: [],
      rule: `no layer_types: attention_chunk_size is ${attentionChunkSize}, so every layer is chunked_attention`,
    };
  }
  return {
    numLayers, types: Array<string>(numLayers).fill('full_attention'), source: 'fallback-full-attention', notes: [],
    rule: 'no layer_types, sliding_window or attention_chunk_size: every layer is full_attention',
  };
}

function nemotronHList(config: ConfigObject, where: string): TransformersList {
  const derived = nemotronHLayerTypes(config, where);
  const declared = optionalInteger(config, 'num_hidden_layers', where);
  const notes = declared !== null && declared !== derived.types.length
    ? [`nemotron_h: transformers sets num_hidden_layers = len(layers_block_type) = ${derived.types.length}; config.json says ${declared}.`]
    : [];
  if (derived.types.length === 0) {
    throw new ConfigError(`${where}: nemotron_h's layer list is empty. ${LAYER_COUNT_FIX}`);
  }
  return { numLayers: derived.types.length, types: derived.types, source: derived.fromConfig ? 'config' : 'family-rule', rule: derived.rule, notes };
}

/** V5 `validate_layer_type` requires `len(layer_types) == num_hidden_layers` (spec §2.3). */
function checkLength(types: readonly string[], numLayers: number, where: string): void {
  if (types.length === numLayers) return;
  throw new ConfigError(
    `${where}: layer_types has ${types.length} entries but num_hidden_layers is ${numLayers}; transformers V5 requires ` +
    'one entry per layer (validate_layer_type). Make the list as long as num_hidden_layers.',
  );
}
