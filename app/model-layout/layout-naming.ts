import type { GenaiConfig } from '../config/genai-config.js';
import type { ValueInfo } from '../engine/decoder-session.js';
import { GPT2_COMBINED_NAMING, OPTIMUM_NAMING, type IoNaming, type KvNaming, type StateKind, type StateNaming } from '../engine/io-naming.js';
import { layerOf } from '../engine/name-pattern.js';

/**
 * The I/O names of a layout's graph: genai_config.json's `decoder.inputs/outputs` when the folder
 * has one (onnxruntime-genai's defaults fill what it leaves out, src/config.h), else GPT-2's combined
 * `past_%d` when the graph's inputs are named so, else Optimum's names.
 */
export function ioNamingFor(genai: GenaiConfig | null, inputs: readonly ValueInfo[]): IoNaming {
  if (genai !== null) return genaiNaming(genai);
  const combined = GPT2_COMBINED_NAMING.kv as Extract<KvNaming, { packing: 'combined' }>;
  if (inputs.some((info) => layerOf(combined.past, info.name) !== null)) return GPT2_COMBINED_NAMING;
  return OPTIMUM_NAMING;
}

function genaiNaming(genai: GenaiConfig): IoNaming {
  const inputs = genai.decoder.inputs;
  const outputs = genai.decoder.outputs;
  const optimumKv = OPTIMUM_NAMING.kv as Extract<KvNaming, { packing: 'per-layer' }>;
  const combinedPast = inputs['past_names'];
  const kv: KvNaming = combinedPast !== undefined && combinedPast !== ''
    ? { packing: 'combined', past: combinedPast, present: outputs['present_names'] ?? combinedPast.replace(/^past/, 'present') }
    : {
      packing: 'per-layer',
      pastKey: inputs['past_key_names'] ?? optimumKv.pastKey,
      pastValue: inputs['past_value_names'] ?? optimumKv.pastValue,
      presentKey: [outputs['present_key_names'] ?? 'present.%d.key'],
      presentValue: [outputs['present_value_names'] ?? 'present.%d.value'],
    };
  return {
    ...OPTIMUM_NAMING,
    source: genai.sourceName,
    inputIds: inputs['input_ids'] ?? OPTIMUM_NAMING.inputIds,
    inputsEmbeds: inputs['embeddings'] ?? inputs['inputs_embeds'] ?? OPTIMUM_NAMING.inputsEmbeds,
    attentionMask: inputs['attention_mask'] ?? OPTIMUM_NAMING.attentionMask,
    positionIds: inputs['position_ids'] ?? OPTIMUM_NAMING.positionIds,
    logits: outputs['logits'] ?? OPTIMUM_NAMING.logits,
    kv,
    states: stateNames(inputs, outputs),
  };
}

/** Hybrid states genai names in pairs: `past_conv_names` → `present_conv_names` (LFM2), and the like. */
function stateNames(inputs: Readonly<Record<string, string>>, outputs: Readonly<Record<string, string>>): StateNaming[] {
  const states: StateNaming[] = [];
  for (const [role, past] of Object.entries(inputs)) {
    const match = /^past_(\w+)_names$/.exec(role);
    if (match === null || match[1] === 'key' || match[1] === 'value') continue;
    const present = outputs[`present_${match[1]}_names`];
    if (present === undefined) continue;
    states.push({ past, present, kind: stateKindOf(match[1]!) });
  }
  return states;
}

function stateKindOf(name: string): StateKind {
  if (/conv/.test(name)) return 'conv';
  if (/ssm|mamba/.test(name)) return 'ssm';
  if (/recurrent|rnn/.test(name)) return 'recurrent';
  return 'state';
}
