import type { KvDtype } from '../tensor/kv-tensor.js';
import type { ValueInfo } from './decoder-session.js';
import { modelError, modelInfo, type ModelDiagnostic } from './model-diagnostic.js';

/** One decoder layer's KV pair: fed as `past_key_values.{i}.*`, read back from `present.{i}.*`. */
export interface KvLayerIo {
  readonly layer: number;
  readonly pastKey: string;
  readonly pastValue: string;
  readonly presentKey: string;
  readonly presentValue: string;
  readonly dtype: KvDtype;
  /** `[batch, kvHeads, seq, headDim]` as declared; dims may be symbolic */
  readonly keyShape: readonly (number | string)[];
  readonly valueShape: readonly (number | string)[];
}

/** What kind of recurrent state a hybrid model carries besides KV (LFM2 conv, Mamba SSM, …). */
export type StateKind = 'conv' | 'ssm' | 'recurrent' | 'state';

/** A non-KV cache input that the graph updates and returns (fed back unchanged by the engine). */
export interface StateIo {
  readonly input: string;
  readonly output: string;
  readonly kind: StateKind;
  /** the decoder layer its name carries, when it carries one */
  readonly layer: number | null;
  readonly type: 'float32' | 'float16';
  readonly shape: readonly (number | string)[];
}

/**
 * The graph's signature as the engine uses it, read from the session's metadata by name (STYLE.md §7:
 * one function, never per-model constants). Names follow Optimum's "decoder with past" exports.
 */
export interface DecoderIo {
  readonly inputIds: string;
  readonly attentionMask: string | null;
  readonly positionIds: string | null;
  /** `num_logits_to_keep` / `logits_to_keep`: fed 1 so the graph computes only the last row */
  readonly logitsToKeep: string | null;
  readonly logits: string;
  readonly logitsType: 'float32' | 'float16';
  /** `[batch, sequence, vocab]` as declared */
  readonly logitsShape: readonly (number | string)[];
  /** by layer index, ascending */
  readonly kvLayers: readonly KvLayerIo[];
  /** the dtype shared by every KV input and output; null for a graph without KV inputs */
  readonly kvDtype: KvDtype | null;
  readonly states: readonly StateIo[];
}

export interface DecoderIoReading {
  /** null when the graph cannot be driven at all (the diagnostics say why) */
  readonly io: DecoderIo | null;
  readonly diagnostics: ModelDiagnostic[];
}

const PAST_KV = /^past_key_values\.(\d+)\.(key|value)$/;
const LOGITS_TO_KEEP = ['num_logits_to_keep', 'logits_to_keep'];
const STATE_NAME = /conv|ssm|recurrent|state|mamba/i;
const FLOAT_TYPES: ReadonlySet<string> = new Set(['float32', 'float16']);

/** Reads the I/O metadata of a decoder graph. Everything unusable becomes a diagnostic with a fix. */
export function readDecoderIo(inputs: readonly ValueInfo[], outputs: readonly ValueInfo[], graphName: string): DecoderIoReading {
  const diagnostics: ModelDiagnostic[] = [];
  const inputByName = new Map(inputs.map((info) => [info.name, info]));
  const outputByName = new Map(outputs.map((info) => [info.name, info]));
  const used = new Set<string>();
  const take = (name: string): string | null => {
    if (!inputByName.has(name)) return null;
    used.add(name);
    return name;
  };

  const inputIds = take('input_ids');
  if (inputIds === null) {
    diagnostics.push(modelError('io-missing-input',
      `${graphName} has no \`input_ids\` input (its inputs: ${listNames(inputs)}). kvscope drives decoder-only ` +
      'graphs that take token ids, as Optimum exports them ("text-generation-with-past").',
      'Export the model with `optimum-cli export onnx --task text-generation-with-past`, or pick the decoder graph of the folder.'));
  }
  const attentionMask = take('attention_mask');
  const positionIds = take('position_ids');
  const logitsToKeep = LOGITS_TO_KEEP.map(take).find((name) => name !== null) ?? null;
  for (const name of [inputIds, attentionMask, positionIds, logitsToKeep]) {
    const info = name === null ? undefined : inputByName.get(name);
    if (info !== undefined && info.type !== 'int64') {
      diagnostics.push(modelError('io-unexpected-input', `${graphName}'s \`${info.name}\` is ${info.type}; kvscope feeds int64, as Optimum exports it.`,
        'Re-export the model with Optimum (int64 ids, mask and positions).'));
    }
  }

  const logitsInfo = outputByName.get('logits');
  let logitsType: 'float32' | 'float16' = 'float32';
  if (logitsInfo === undefined) {
    diagnostics.push(modelError('io-logits', `${graphName} has no \`logits\` output (its outputs: ${listNames(outputs)}).`,
      'Use a causal-LM export whose graph returns `logits` [batch, sequence, vocab].'));
  } else if (!FLOAT_TYPES.has(logitsInfo.type)) {
    diagnostics.push(modelError('io-logits', `${graphName}'s \`logits\` are ${logitsInfo.type}; kvscope reads float32 or float16 logits.`,
      'Use the float32 or fp16 export of this model.'));
  } else {
    logitsType = logitsInfo.type as 'float32' | 'float16';
  }

  const kvLayers = readKvLayers(inputs, outputByName, used, graphName, diagnostics);
  const kvDtype = sharedKvDtype(kvLayers, graphName, diagnostics);
  const states = readStates(inputs, outputByName, used, graphName, diagnostics);

  const unexpected = inputs.filter((info) => !used.has(info.name)).map((info) => info.name);
  if (unexpected.length > 0) {
    diagnostics.push(modelError('io-unexpected-input',
      `${graphName} has inputs kvscope does not know how to feed: ${unexpected.map((name) => `\`${name}\``).join(', ')}. ` +
      'It feeds input_ids, attention_mask, position_ids, num_logits_to_keep, past_key_values.{i}.key/value and hybrid cache states.',
      'Use a decoder-only "with past" export (inputs_embeds, pixel values or encoder outputs are not supported).'));
  }
  const fatal = diagnostics.some((d) => d.severity === 'error');
  if (fatal || inputIds === null || logitsInfo === undefined) return { io: null, diagnostics };
  return {
    io: { inputIds, attentionMask, positionIds, logitsToKeep, logits: 'logits', logitsType, logitsShape: logitsInfo.shape, kvLayers, kvDtype, states },
    diagnostics,
  };
}

function readKvLayers(
  inputs: readonly ValueInfo[], outputByName: ReadonlyMap<string, ValueInfo>, used: Set<string>, graphName: string,
  diagnostics: ModelDiagnostic[],
): KvLayerIo[] {
  const pasts = new Map<number, { key?: ValueInfo; value?: ValueInfo }>();
  for (const info of inputs) {
    const match = PAST_KV.exec(info.name);
    if (match === null) continue;
    used.add(info.name);
    const layer = Number(match[1]);
    const entry = pasts.get(layer) ?? {};
    entry[match[2] as 'key' | 'value'] = info;
    pasts.set(layer, entry);
  }
  const layers: KvLayerIo[] = [];
  for (const layer of [...pasts.keys()].sort((a, b) => a - b)) {
    const { key, value } = pasts.get(layer)!;
    if (key === undefined || value === undefined) {
      diagnostics.push(modelError('io-missing-input',
        `${graphName} has past_key_values.${layer}.${key === undefined ? 'value' : 'key'} but no past_key_values.${layer}.${key === undefined ? 'key' : 'value'}.`,
        'The graph is not a standard "with past" export; re-export it with Optimum.', [layer]));
      continue;
    }
    const presentKey = presentName(layer, 'key', outputByName);
    const presentValue = presentName(layer, 'value', outputByName);
    if (presentKey === null || presentValue === null) {
      diagnostics.push(modelError('io-missing-output',
        `${graphName} takes past_key_values.${layer}.key/value but returns no present.${layer}.key/value, so the cache cannot grow.`,
        'Re-export with `--task text-generation-with-past` (use_cache=True) so every past input has a present output.', [layer]));
      continue;
    }
    const presentInfos = [outputByName.get(presentKey)!, outputByName.get(presentValue)!];
    for (const info of [key, value, ...presentInfos]) {
      if (!FLOAT_TYPES.has(info.type)) {
        diagnostics.push(modelError('io-kv-dtype', `${graphName}: \`${info.name}\` is ${info.type}; kvscope caches float32 or float16 keys and values.`,
          'Use the float32 (model.onnx) or fp16-KV (model_fp16.onnx) export.', [layer]));
      }
      if (info.shape.length !== 4) {
        diagnostics.push(modelError('io-kv-shape',
          `${graphName}: \`${info.name}\` has shape [${info.shape.join(', ')}]; KV tensors must be [batch, kv_heads, seq, head_dim].`,
          'Use an export whose KV cache is [batch, num_key_value_heads, sequence, head_dim] per layer.', [layer]));
      }
    }
    if (key.type !== presentInfos[0]!.type || value.type !== presentInfos[1]!.type || key.type !== value.type) {
      diagnostics.push(modelError('io-kv-dtype',
        `${graphName}: layer ${layer}'s KV inputs and outputs differ in dtype (${key.type}/${value.type} in, ${presentInfos[0]!.type}/${presentInfos[1]!.type} out).`,
        'Use an export whose past and present tensors share one dtype.', [layer]));
    }
    layers.push({
      layer, pastKey: key.name, pastValue: value.name, presentKey, presentValue,
      dtype: key.type === 'float16' ? 'float16' : 'float32', keyShape: key.shape, valueShape: value.shape,
    });
  }
  return layers;
}

/** Optimum names the outputs `present.{i}.key`; some exporters write `present_key_values.{i}.key`. */
function presentName(layer: number, part: 'key' | 'value', outputByName: ReadonlyMap<string, ValueInfo>): string | null {
  for (const name of [`present.${layer}.${part}`, `present_key_values.${layer}.${part}`]) {
    if (outputByName.has(name)) return name;
  }
  return null;
}

function sharedKvDtype(layers: readonly KvLayerIo[], graphName: string, diagnostics: ModelDiagnostic[]): KvDtype | null {
  const dtypes = [...new Set(layers.map((layer) => layer.dtype))];
  if (dtypes.length > 1) {
    diagnostics.push(modelError('io-kv-dtype', `${graphName} mixes float32 and float16 KV tensors across layers.`,
      'Use an export with one KV dtype for every layer.'));
  }
  return dtypes[0] ?? null;
}

/**
 * Hybrid models (LFM2, Jamba, Granite-4, Qwen3-Next…) also carry conv or SSM states. Their names vary
 * by exporter (`past_conv.{i}`, `past_key_values.{i}.conv`, `conv_state.{i}`…); a state is an input whose
 * name says so and that has a matching output, found by the usual past→present renamings.
 */
function readStates(
  inputs: readonly ValueInfo[], outputByName: ReadonlyMap<string, ValueInfo>, used: Set<string>, graphName: string,
  diagnostics: ModelDiagnostic[],
): StateIo[] {
  const states: StateIo[] = [];
  for (const info of inputs) {
    if (used.has(info.name) || !STATE_NAME.test(info.name)) continue;
    used.add(info.name);
    const output = stateOutputCandidates(info.name).find((name) => outputByName.has(name)) ?? null;
    if (output === null) {
      diagnostics.push(modelError('io-hybrid-state',
        `${graphName} has the state input \`${info.name}\` but no output kvscope can feed back into it ` +
        `(looked for ${stateOutputCandidates(info.name).map((name) => `\`${name}\``).join(', ')}).`,
        'Re-export the model so every cache-state input has a matching present output.'));
      continue;
    }
    if (!FLOAT_TYPES.has(info.type)) {
      diagnostics.push(modelError('io-hybrid-state', `${graphName}: state \`${info.name}\` is ${info.type}; kvscope feeds float32 or float16 states.`,
        'Use the float32 or fp16 export.'));
      continue;
    }
    const layerMatch = /(\d+)/.exec(info.name);
    states.push({
      input: info.name, output, kind: stateKind(info.name), layer: layerMatch === null ? null : Number(layerMatch[1]),
      type: info.type as 'float32' | 'float16', shape: info.shape,
    });
  }
  if (states.length > 0) {
    diagnostics.push(modelInfo('io-hybrid-state',
      `${graphName} is a hybrid model: besides KV it carries ${states.length} state tensor(s) (${[...new Set(states.map((s) => s.kind))].join(', ')}). ` +
      'kvscope feeds them back at full precision every step; only KV layers are cached and quantized.',
      [...new Set(states.flatMap((s) => (s.layer === null ? [] : [s.layer])))]));
  }
  return states;
}

export function stateOutputCandidates(input: string): string[] {
  const candidates = [
    input.replace(/^past_key_values\./, 'present.'),
    input.replace(/^past_key_values/, 'present'),
    input.replace(/^past_/, 'present_'),
    input.replace(/^past\./, 'present.'),
    input.replace(/^past/, 'present'),
    `present_${input}`,
    `present.${input}`,
  ];
  return [...new Set(candidates.filter((name) => name !== input))];
}

function stateKind(name: string): StateKind {
  if (/conv/i.test(name)) return 'conv';
  if (/ssm|mamba/i.test(name)) return 'ssm';
  if (/recurrent/i.test(name)) return 'recurrent';
  return 'state';
}

function listNames(infos: readonly ValueInfo[]): string {
  if (infos.length === 0) return 'none';
  const names = infos.map((info) => info.name);
  return names.length <= 8 ? names.join(', ') : `${names.slice(0, 8).join(', ')}, … (${names.length} in all)`;
}
