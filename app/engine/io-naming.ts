import type { NamePattern } from './name-pattern.js';

/**
 * How a decoder graph names its inputs and outputs: what `readDecoderIo` looks for, given by the
 * model's layout (app/model-layout/: genai_config.json's names, GPT-2's combined past, Optimum's
 * defaults), never hard-coded in the reader (seams.md "Graph I/O from the layout").
 */
export interface IoNaming {
  /** where the names come from, for messages: `Optimum`, `genai_config.json`, … */
  readonly source: string;
  readonly inputIds: string;
  /** the graph may instead take `inputs_embeds` (refused: kvscope feeds token ids) */
  readonly inputsEmbeds: string;
  readonly attentionMask: string;
  readonly positionIds: string;
  /** `num_logits_to_keep` / `logits_to_keep`: fed 1, so the graph computes only the last row */
  readonly logitsToKeep: readonly string[];
  /** Optimum's merged decoders: false with an empty past at the prefill, true after */
  readonly useCacheBranch: string;
  readonly logits: string;
  readonly kv: KvNaming;
  /** non-KV cache states the layout names (LFM2's `past_conv.%d`); others are found by their names */
  readonly states: readonly StateNaming[];
}

/**
 * `per-layer`: `past_key_values.%d.key` and `.value`, each `[batch, kvHeads, seq, headDim]`.
 * `combined`: GPT-2's onnxruntime.transformers exports, one `past_%d` of `[2, batch, kvHeads, seq,
 * headDim]` per layer (keys at index 0, values at 1), returned as `present_%d`.
 */
export type KvNaming =
  | {
    readonly packing: 'per-layer';
    readonly pastKey: NamePattern;
    readonly pastValue: NamePattern;
    /** alternatives, first match wins (`present.%d.key`, then `present_key_values.%d.key`) */
    readonly presentKey: readonly NamePattern[];
    readonly presentValue: readonly NamePattern[];
  }
  | { readonly packing: 'combined'; readonly past: NamePattern; readonly present: NamePattern };

export type KvPacking = KvNaming['packing'];

/** What kind of recurrent state a hybrid model carries besides KV (LFM2 conv, Mamba SSM, …). */
export type StateKind = 'conv' | 'ssm' | 'recurrent' | 'state';

export interface StateNaming {
  readonly past: NamePattern;
  readonly present: NamePattern;
  readonly kind: StateKind;
}

/** Optimum's "text-generation-with-past" names (transformers.js and most Hugging Face ONNX exports). */
export const OPTIMUM_NAMING: IoNaming = {
  source: 'Optimum',
  inputIds: 'input_ids',
  inputsEmbeds: 'inputs_embeds',
  attentionMask: 'attention_mask',
  positionIds: 'position_ids',
  logitsToKeep: ['num_logits_to_keep', 'logits_to_keep'],
  useCacheBranch: 'use_cache_branch',
  logits: 'logits',
  kv: {
    packing: 'per-layer',
    pastKey: 'past_key_values.%d.key',
    pastValue: 'past_key_values.%d.value',
    presentKey: ['present.%d.key', 'present_key_values.%d.key'],
    presentValue: ['present.%d.value', 'present_key_values.%d.value'],
  },
  states: [],
};

/** onnxruntime.transformers' GPT-2 exports (and genai's `past_names`): combined `past_%d` / `present_%d`. */
export const GPT2_COMBINED_NAMING: IoNaming = {
  ...OPTIMUM_NAMING,
  source: 'onnxruntime.transformers GPT-2 (combined past_N)',
  kv: { packing: 'combined', past: 'past_%d', present: 'present_%d' },
};
