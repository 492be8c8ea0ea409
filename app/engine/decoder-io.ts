import type { KvDtype } from '../tensor/kv-tensor.js';
import type { ValueInfo } from './decoder-session.js';
import { refusedInputs } from './decoder-io-refusals.js';
import { OPTIMUM_NAMING, type IoNaming, type KvPacking, type StateKind } from './io-naming.js';
import { modelError, modelInfo, type ModelDiagnostic } from './model-diagnostic.js';
import { layerOf, nameFor } from './name-pattern.js';

export type { StateKind } from './io-naming.js';

/**
 * One decoder layer's KV pair. `per-layer` packing: fed as `pastKey`/`pastValue`, read back from
 * `presentKey`/`presentValue`. `combined` packing (GPT-2's `past_N`): one `[2, batch, kvHeads, seq,
 * headDim]` input and output, whose name both `pastKey` and `pastValue` (and both presents) hold;
 * the lanes split and join it at the cache boundary (kv-packing.ts).
 */
export interface KvLayerIo {
  readonly layer: number;
  readonly packing: KvPacking;
  readonly pastKey: string;
  readonly pastValue: string;
  readonly presentKey: string;
  readonly presentValue: string;
  readonly dtype: KvDtype;
  /** `[batch, kvHeads, seq, headDim]` as declared (combined: without the leading 2); dims may be symbolic */
  readonly keyShape: readonly (number | string)[];
  readonly valueShape: readonly (number | string)[];
}

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

/** The integer types a graph may declare for ids, mask and positions (onnxruntime's names). */
export type IndexType = 'int64' | 'int32';

/**
 * The graph's signature as the engine uses it, read from the graph's metadata by the names its
 * layout gives (STYLE.md §7: one function, never per-model constants).
 */
export interface DecoderIo {
  readonly inputIds: string;
  readonly inputIdsType: IndexType;
  readonly attentionMask: string | null;
  readonly attentionMaskType: IndexType;
  readonly positionIds: string | null;
  readonly positionIdsType: IndexType;
  /** `num_logits_to_keep` / `logits_to_keep`: fed 1 so the graph computes only the last row */
  readonly logitsToKeep: string | null;
  /** Optimum's merged decoders: `use_cache_branch`, false at the prefill (empty past), true after */
  readonly useCacheBranch: string | null;
  readonly logits: string;
  readonly logitsType: 'float32' | 'float16';
  /** `[batch, sequence, vocab]` as declared */
  readonly logitsShape: readonly (number | string)[];
  /** by layer index, ascending */
  readonly kvLayers: readonly KvLayerIo[];
  /** the dtype shared by every KV input and output; null for a graph without KV inputs */
  readonly kvDtype: KvDtype | null;
  readonly states: readonly StateIo[];
  /**
   * genai's `past_present_share_buffer`: a present may come back longer than past + new (the rows
   * past the valid length are the buffer's spare capacity), so the lanes keep only the valid rows.
   */
  readonly presentMayExceedValidLength: boolean;
}

export interface DecoderIoReading {
  /** null when the graph cannot be driven at all (the diagnostics say why) */
  readonly io: DecoderIo | null;
  readonly diagnostics: ModelDiagnostic[];
}

export interface ReadDecoderIoOptions {
  /** genai_config.json's `search.past_present_share_buffer` */
  readonly presentMayExceedValidLength?: boolean;
}

const STATE_NAME = /conv|ssm|recurrent|state|mamba/i;
const FLOAT_TYPES: ReadonlySet<string> = new Set(['float32', 'float16']);
const INDEX_TYPES: ReadonlySet<string> = new Set(['int64', 'int32']);

/**
 * Reads the I/O metadata of a decoder graph under `naming` (Optimum's by default). Everything
 * unusable becomes a diagnostic with a fix.
 */
export function readDecoderIo(
  inputs: readonly ValueInfo[], outputs: readonly ValueInfo[], graphName: string, naming: IoNaming = OPTIMUM_NAMING,
  options: ReadDecoderIoOptions = {},
): DecoderIoReading {
  const diagnostics: ModelDiagnostic[] = [];
  const inputByName = new Map(inputs.map((info) => [info.name, info]));
  const outputByName = new Map(outputs.map((info) => [info.name, info]));
  const used = new Set<string>();
  const take = (name: string): string | null => {
    if (!inputByName.has(name)) return null;
    used.add(name);
    return name;
  };

  // What kvscope cannot feed at all (pre-quantized or paged caches, embeddings-only decoders, …) is
  // named for what it is, before the generic checks would report it as something vaguer.
  const refusals = refusedInputs(inputs, naming, graphName);
  diagnostics.push(...refusals.diagnostics);
  for (const name of refusals.names) used.add(name);

  const inputIds = take(naming.inputIds);
  if (inputIds === null && !refusals.names.has(naming.inputsEmbeds)) {
    diagnostics.push(modelError('io-missing-input',
      `${graphName} has no \`${naming.inputIds}\` input (its inputs: ${listNames(inputs)}). kvscope drives decoder-only ` +
      'graphs that take token ids, as Optimum exports them ("text-generation-with-past").',
      'Export the model with `optimum-cli export onnx --task text-generation-with-past`, or pick the decoder graph of the folder.'));
  }
  const attentionMask = take(naming.attentionMask);
  const positionIds = take(naming.positionIds);
  const logitsToKeep = naming.logitsToKeep.map(take).find((name) => name !== null) ?? null;
  const indexType = (name: string | null): IndexType => {
    const info = name === null ? undefined : inputByName.get(name);
    if (info === undefined) return 'int64';
    if (INDEX_TYPES.has(info.type)) return info.type as IndexType;
    diagnostics.push(modelError('io-unexpected-input', `${graphName}'s \`${info.name}\` is ${info.type}; kvscope feeds int64 or int32 ids, mask and positions.`,
      'Re-export the model with int64 (Optimum) or int32 (onnxruntime.transformers) ids, mask and positions.'));
    return 'int64';
  };
  const inputIdsType = indexType(inputIds);
  const attentionMaskType = indexType(attentionMask);
  const positionIdsType = indexType(positionIds);
  const logitsToKeepInfo = logitsToKeep === null ? undefined : inputByName.get(logitsToKeep);
  if (logitsToKeepInfo !== undefined && logitsToKeepInfo.type !== 'int64') {
    diagnostics.push(modelError('io-unexpected-input', `${graphName}'s \`${logitsToKeepInfo.name}\` is ${logitsToKeepInfo.type}; kvscope feeds it as int64, as Optimum exports it.`,
      'Re-export the model with Optimum.'));
  }
  const useCacheBranch = take(naming.useCacheBranch);
  const branchInfo = useCacheBranch === null ? undefined : inputByName.get(useCacheBranch);
  if (branchInfo !== undefined && branchInfo.type !== 'bool') {
    diagnostics.push(modelError('io-unexpected-input', `${graphName}'s \`${branchInfo.name}\` is ${branchInfo.type}; Optimum's merged decoders declare it bool [1].`,
      'Re-export the merged decoder with Optimum, or use decoder_model.onnx with decoder_with_past_model.onnx.'));
  }

  const logitsInfo = outputByName.get(naming.logits);
  let logitsType: 'float32' | 'float16' = 'float32';
  if (logitsInfo === undefined) {
    diagnostics.push(modelError('io-logits', `${graphName} has no \`${naming.logits}\` output (its outputs: ${listNames(outputs)}).`,
      'Use a causal-LM export whose graph returns `logits` [batch, sequence, vocab].'));
  } else if (!FLOAT_TYPES.has(logitsInfo.type)) {
    diagnostics.push(modelError('io-logits', `${graphName}'s \`${naming.logits}\` are ${logitsInfo.type}; kvscope reads float32 or float16 logits.`,
      'Use the float32 or fp16 export of this model.'));
  } else {
    logitsType = logitsInfo.type as 'float32' | 'float16';
  }

  const kvLayers = readKvLayers(inputs, outputByName, used, refusals.names, naming, graphName, diagnostics);
  const kvDtype = sharedKvDtype(kvLayers, graphName, diagnostics);
  const states = readStates(inputs, outputByName, used, naming, graphName, diagnostics);

  const unexpected = inputs.filter((info) => !used.has(info.name)).map((info) => info.name);
  if (unexpected.length > 0) {
    diagnostics.push(modelError('io-unexpected-input',
      `${graphName} has inputs kvscope does not know how to feed: ${unexpected.map((name) => `\`${name}\``).join(', ')}. ` +
      `It feeds ${naming.inputIds}, ${naming.attentionMask}, ${naming.positionIds}, num_logits_to_keep, ${naming.useCacheBranch}, ` +
      `${describeKvNaming(naming)} and hybrid cache states (naming: ${naming.source}).`,
      'Use a decoder-only "with past" export (inputs_embeds, pixel values or encoder outputs are not supported).'));
  }
  const fatal = diagnostics.some((d) => d.severity === 'error');
  if (fatal || inputIds === null || logitsInfo === undefined) return { io: null, diagnostics };
  return {
    io: {
      inputIds, inputIdsType, attentionMask, attentionMaskType, positionIds, positionIdsType, logitsToKeep, useCacheBranch,
      logits: naming.logits, logitsType, logitsShape: logitsInfo.shape, kvLayers, kvDtype, states,
      presentMayExceedValidLength: options.presentMayExceedValidLength === true,
    },
    diagnostics,
  };
}

function describeKvNaming(naming: IoNaming): string {
  return naming.kv.packing === 'combined' ? naming.kv.past : `${naming.kv.pastKey}/${naming.kv.pastValue.split('.').pop() ?? ''}`;
}

interface PastInputs {
  key?: ValueInfo;
  value?: ValueInfo;
  combined?: ValueInfo;
}

function readKvLayers(
  inputs: readonly ValueInfo[], outputByName: ReadonlyMap<string, ValueInfo>, used: Set<string>, refused: ReadonlySet<string>,
  naming: IoNaming, graphName: string, diagnostics: ModelDiagnostic[],
): KvLayerIo[] {
  const kv = naming.kv;
  const pasts = new Map<number, PastInputs>();
  for (const info of inputs) {
    if (refused.has(info.name)) continue;
    const entry = (layer: number): PastInputs => {
      used.add(info.name);
      const existing = pasts.get(layer) ?? {};
      pasts.set(layer, existing);
      return existing;
    };
    if (kv.packing === 'combined') {
      const layer = layerOf(kv.past, info.name);
      if (layer !== null) entry(layer).combined = info;
      continue;
    }
    const keyLayer = layerOf(kv.pastKey, info.name);
    if (keyLayer !== null) entry(keyLayer).key = info;
    const valueLayer = layerOf(kv.pastValue, info.name);
    if (valueLayer !== null) entry(valueLayer).value = info;
  }
  const layers: KvLayerIo[] = [];
  for (const layer of [...pasts.keys()].sort((a, b) => a - b)) {
    const past = pasts.get(layer)!;
    const read = kv.packing === 'combined'
      ? combinedLayer(layer, past.combined!, nameFor(kv.present, layer), outputByName, graphName, diagnostics)
      : perLayerLayer(layer, past, kv, outputByName, graphName, diagnostics);
    if (read !== null) layers.push(read);
  }
  return layers;
}

function perLayerLayer(
  layer: number, past: PastInputs, kv: Extract<IoNaming['kv'], { packing: 'per-layer' }>, outputByName: ReadonlyMap<string, ValueInfo>,
  graphName: string, diagnostics: ModelDiagnostic[],
): KvLayerIo | null {
  const { key, value } = past;
  if (key === undefined || value === undefined) {
    diagnostics.push(modelError('io-missing-input',
      `${graphName} has ${nameFor(key === undefined ? kv.pastValue : kv.pastKey, layer)} but no ${nameFor(key === undefined ? kv.pastKey : kv.pastValue, layer)}.`,
      'The graph is not a standard "with past" export; re-export it with Optimum.', [layer]));
    return null;
  }
  const presentKey = kv.presentKey.map((pattern) => nameFor(pattern, layer)).find((name) => outputByName.has(name)) ?? null;
  const presentValue = kv.presentValue.map((pattern) => nameFor(pattern, layer)).find((name) => outputByName.has(name)) ?? null;
  if (presentKey === null || presentValue === null) {
    diagnostics.push(modelError('io-missing-output',
      `${graphName} takes ${key.name}/${value.name.split('.').pop() ?? ''} but returns no ${nameFor(kv.presentKey[0]!, layer)}/value, so the cache cannot grow.`,
      'Re-export with `--task text-generation-with-past` (use_cache=True) so every past input has a present output.', [layer]));
    return null;
  }
  const presentInfos = [outputByName.get(presentKey)!, outputByName.get(presentValue)!];
  checkKvTypes([key, value, ...presentInfos], layer, graphName, diagnostics);
  for (const info of [key, value, ...presentInfos]) {
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
  return {
    layer, packing: 'per-layer', pastKey: key.name, pastValue: value.name, presentKey, presentValue,
    dtype: key.type === 'float16' ? 'float16' : 'float32', keyShape: key.shape, valueShape: value.shape,
  };
}

function combinedLayer(
  layer: number, past: ValueInfo, presentName: string, outputByName: ReadonlyMap<string, ValueInfo>, graphName: string, diagnostics: ModelDiagnostic[],
): KvLayerIo | null {
  const present = outputByName.get(presentName);
  if (present === undefined) {
    diagnostics.push(modelError('io-missing-output', `${graphName} takes ${past.name} but returns no ${presentName}, so the cache cannot grow.`,
      'Use the export whose every past_N input has a present_N output (onnxruntime.transformers convert_to_onnx with past state).', [layer]));
    return null;
  }
  checkKvTypes([past, present], layer, graphName, diagnostics);
  for (const info of [past, present]) {
    if (info.shape.length !== 5 || (typeof info.shape[0] === 'number' && info.shape[0] !== 2)) {
      diagnostics.push(modelError('io-kv-shape',
        `${graphName}: \`${info.name}\` has shape [${info.shape.join(', ')}]; a combined past is [2, batch, kv_heads, seq, head_dim] (keys, then values).`,
        'Use an export whose combined past_N is [2, batch, num_heads, past_sequence_length, head_size], as onnxruntime.transformers writes it.', [layer]));
    }
  }
  if (past.type !== present.type) {
    diagnostics.push(modelError('io-kv-dtype', `${graphName}: ${past.name} is ${past.type} but ${present.name} is ${present.type}.`,
      'Use an export whose past and present tensors share one dtype.', [layer]));
  }
  const shape = past.shape.slice(1);
  return {
    layer, packing: 'combined', pastKey: past.name, pastValue: past.name, presentKey: present.name, presentValue: present.name,
    dtype: past.type === 'float16' ? 'float16' : 'float32', keyShape: shape, valueShape: shape,
  };
}

/** One diagnostic per layer for its KV tensors of a type kvscope cannot cache (bf16 said apart). */
function checkKvTypes(infos: readonly ValueInfo[], layer: number, graphName: string, diagnostics: ModelDiagnostic[]): void {
  const bad = infos.filter((info) => !FLOAT_TYPES.has(info.type));
  if (bad.length === 0) return;
  const names = bad.map((info) => `\`${info.name}\``).join(', ');
  if (bad.some((info) => info.type === 'bfloat16')) {
    diagnostics.push(modelError('io-kv-bf16',
      `${graphName}: ${names} ${bad.length > 1 ? 'are' : 'is'} bfloat16. onnxruntime-node has no bfloat16 tensors in JavaScript, so kvscope can neither read ` +
      'the present keys and values into its cache nor feed them back.',
      'Use the fp16 or fp32 export of the model (or re-export with --dtype fp16).', [layer]));
    return;
  }
  diagnostics.push(modelError('io-kv-dtype', `${graphName}: ${names} ${bad.length > 1 ? 'are' : 'is'} ${[...new Set(bad.map((info) => info.type))].join('/')}; kvscope caches float32 or float16 keys and values.`,
    'Use the float32 (model.onnx) or fp16-KV (model_fp16.onnx) export.', [layer]));
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
 * Hybrid models (LFM2, Jamba, Granite-4, Qwen3-Next…) also carry conv or SSM states. The layout may
 * name them (genai's `past_conv.%d` → `present_conv.%d`); otherwise their names vary by exporter
 * (`past_conv.{i}`, `past_key_values.{i}.conv`, `conv_state.{i}`…), and a state is an input whose name
 * says so and that has a matching output, found by the usual past→present renamings.
 */
function readStates(
  inputs: readonly ValueInfo[], outputByName: ReadonlyMap<string, ValueInfo>, used: Set<string>, naming: IoNaming, graphName: string,
  diagnostics: ModelDiagnostic[],
): StateIo[] {
  const states: StateIo[] = [];
  for (const info of inputs) {
    if (used.has(info.name)) continue;
    const named = naming.states.map((state) => ({ state, layer: layerOf(state.past, info.name) })).find((match) => match.layer !== null);
    if (named === undefined && !STATE_NAME.test(info.name)) continue;
    used.add(info.name);
    const candidates = named !== undefined ? [nameFor(named.state.present, named.layer!)] : stateOutputCandidates(info.name);
    const output = candidates.find((name) => outputByName.has(name)) ?? null;
    if (output === null) {
      diagnostics.push(modelError('io-hybrid-state',
        `${graphName} has the state input \`${info.name}\` but no output kvscope can feed back into it ` +
        `(looked for ${candidates.map((name) => `\`${name}\``).join(', ')}).`,
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
      input: info.name, output, kind: named?.state.kind ?? stateKind(info.name),
      layer: named !== undefined ? named.layer : layerMatch === null ? null : Number(layerMatch[1]),
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

export function listNames(infos: readonly ValueInfo[]): string {
  if (infos.length === 0) return 'none';
  const names = infos.map((info) => info.name);
  return names.length <= 8 ? names.join(', ') : `${names.slice(0, 8).join(', ')}, … (${names.length} in all)`;
}
