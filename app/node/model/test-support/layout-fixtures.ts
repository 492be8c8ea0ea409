import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { nameFor } from '../../../engine/name-pattern.js';
import { encodeModel } from '../../../onnx/onnx-model.js';
import { TINY_DEFAULTS, tinyDecoder, type TinyDecoderOptions } from '../../../model-layout/test-support/tiny-decoder.js';
import { writeModelWithExternalData, type ExternalDataOptions } from '../../onnx/write-external-data.js';

/** One graph of a fixture folder: where it goes, how it is built, and its external data, if any. */
export interface FixtureGraph {
  readonly path: string;
  readonly options?: Partial<TinyDecoderOptions>;
  readonly externalData?: ExternalDataOptions;
}

export interface FixtureFolder {
  readonly graphs: readonly FixtureGraph[];
  /** config.json's object; default: tinyConfigJson of the first graph's options; null: no config.json */
  readonly configJson?: Record<string, unknown> | null;
  /** genai_config.json's object, when the folder has one */
  readonly genaiConfig?: Record<string, unknown>;
}

/** Writes a model folder (configs and graphs) into `dir`; returns `dir`. */
export async function writeFixtureFolder(dir: string, folder: FixtureFolder): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const first = { ...TINY_DEFAULTS, ...folder.graphs[0]?.options };
  const configJson = folder.configJson === undefined ? tinyConfigJson(first) : folder.configJson;
  if (configJson !== null) writeFileSync(join(dir, 'config.json'), JSON.stringify(configJson, null, 2));
  if (folder.genaiConfig !== undefined) writeFileSync(join(dir, 'genai_config.json'), JSON.stringify(folder.genaiConfig, null, 2));
  for (const graph of folder.graphs) {
    const path = join(dir, graph.path);
    mkdirSync(dirname(path), { recursive: true });
    const model = tinyDecoder(graph.options);
    if (graph.externalData === undefined) writeFileSync(path, encodeModel(model));
    else await writeModelWithExternalData(model, path, graph.externalData);
  }
  return dir;
}

/** The config.json transformers would have for a tiny decoder (Llama, or LFM2 with conv layers). */
export function tinyConfigJson(options: Partial<TinyDecoderOptions>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const o = { ...TINY_DEFAULTS, ...options };
  const conv = o.convLayers.length > 0;
  return {
    model_type: conv ? 'lfm2' : 'llama',
    num_hidden_layers: o.layers,
    num_attention_heads: o.kvHeads,
    num_key_value_heads: o.kvHeads,
    head_dim: o.headDim,
    hidden_size: o.kvHeads * o.headDim,
    vocab_size: o.vocab,
    max_position_embeddings: 64,
    ...(conv ? { layer_types: Array.from({ length: o.layers }, (_, i) => (o.convLayers.includes(i) ? 'conv' : 'full_attention')) } : {}),
    ...extra,
  };
}

/**
 * The peer every layout is proven against: a minimal onnxruntime-node greedy loop written by hand
 * for the graph's own I/O, with none of kvscope's engine (no StepInputs, lanes or packing): ids,
 * mask and positions of the graph's integer type, empty pasts at the prefill (zeros for conv
 * states), every present (and state) fed straight back, `use_cache_branch` false then true, the
 * legacy pair's prefill on its first graph, share-buffer presents cut to their valid rows by hand.
 */
export async function handGreedy(
  graph: string, o: TinyDecoderOptions, promptIds: readonly number[], newTokens: number,
  { prefillGraph = null, dropStates = false }: { prefillGraph?: string | null; dropStates?: boolean } = {},
): Promise<number[]> {
  const session = await ort.InferenceSession.create(graph);
  const prefill = prefillGraph === null ? null : await ort.InferenceSession.create(prefillGraph);
  try {
    const n = o.naming;
    const hidden = o.kvHeads * o.headDim;
    const kvArray = (count: number): Float32Array | Uint16Array => (o.kvType === 'float16' ? new Uint16Array(count) : new Float32Array(count));
    const kvType = o.kvType === 'float16' ? 'float16' : 'float32';
    const ints = (values: readonly number[]): ort.Tensor => (o.idsType === 'int32'
      ? new ort.Tensor('int32', Int32Array.from(values), [1, values.length])
      : new ort.Tensor('int64', BigInt64Array.from(values, BigInt), [1, values.length]));
    const attention = Array.from({ length: o.layers }, (_, i) => i).filter((i) => !o.convLayers.includes(i));
    const past: Record<string, ort.Tensor> = {};
    for (const layer of attention) {
      if (n.kv.packing === 'combined') past[nameFor(n.kv.past, layer)] = new ort.Tensor(kvType, kvArray(0), [2, 1, o.kvHeads, 0, o.headDim]);
      else {
        past[nameFor(n.kv.pastKey, layer)] = new ort.Tensor(kvType, kvArray(0), [1, o.kvHeads, 0, o.headDim]);
        past[nameFor(n.kv.pastValue, layer)] = new ort.Tensor(kvType, kvArray(0), [1, o.kvHeads, 0, o.headDim]);
      }
    }
    for (const layer of o.convLayers) past[nameFor(n.states[0]!.past, layer)] = new ort.Tensor('float32', new Float32Array(hidden * o.convWidth), [1, hidden, o.convWidth]);

    const generated: number[] = [];
    let tokens = [...promptIds];
    let pastLength = 0;
    for (let step = 0; step < newTokens; step++) {
      const total = pastLength + tokens.length;
      const feeds: Record<string, ort.Tensor> = {
        [n.inputIds]: ints(tokens),
        [n.attentionMask]: ints(new Array<number>(total).fill(1)),
        ...(o.positionIds ? { [n.positionIds]: ints(tokens.map((_, i) => pastLength + i)) } : {}),
      };
      if (o.merged) feeds[n.useCacheBranch] = new ort.Tensor('bool', Uint8Array.of(pastLength > 0 ? 1 : 0), [1]);
      const usePrefill = prefill !== null && pastLength === 0;
      if (!usePrefill) Object.assign(feeds, past);
      else for (const layer of o.convLayers) feeds[nameFor(n.states[0]!.past, layer)] = past[nameFor(n.states[0]!.past, layer)]!;
      const out = await (usePrefill ? prefill : session).run(feeds);
      const logits = out[n.logits]!;
      const vocab = logits.dims[2]!;
      const row = Array.from({ length: vocab }, (_, i) => {
        const value = (logits.data as Float32Array | Uint16Array)[logits.data.length - vocab + i]!;
        return logits.type === 'float16' ? halfToFloat(value) : value;
      });
      const next = row.indexOf(Math.max(...row));
      for (const layer of attention) {
        if (n.kv.packing === 'combined') past[nameFor(n.kv.past, layer)] = valid(out[nameFor(n.kv.present, layer)]!, total, 2 * o.kvHeads, o.headDim);
        else {
          past[nameFor(n.kv.pastKey, layer)] = valid(out[nameFor(n.kv.presentKey[0]!, layer)]!, total, o.kvHeads, o.headDim);
          past[nameFor(n.kv.pastValue, layer)] = valid(out[nameFor(n.kv.presentValue[0]!, layer)]!, total, o.kvHeads, o.headDim);
        }
      }
      // dropStates: the conv states stay the zeros they started as (to show that the logits depend on them)
      if (!dropStates) for (const layer of o.convLayers) past[nameFor(n.states[0]!.past, layer)] = out[nameFor(n.states[0]!.present, layer)]!;
      generated.push(next);
      pastLength = total;
      tokens = [next];
    }
    return generated;
  } finally {
    await session.release();
    await prefill?.release();
  }
}

/** The first `seq` rows of each of `slabs` slabs: a share-buffer present cut to its valid length, by hand. */
function valid(tensor: ort.Tensor, seq: number, slabs: number, width: number): ort.Tensor {
  const dims = tensor.dims;
  const length = dims[dims.length - 2]!;
  if (length === seq) return tensor;
  const data = tensor.data as Float32Array | Uint16Array;
  const out = data instanceof Float32Array ? new Float32Array(slabs * seq * width) : new Uint16Array(slabs * seq * width);
  for (let s = 0; s < slabs; s++) for (let i = 0; i < seq * width; i++) out[s * seq * width + i] = data[s * length * width + i]!;
  return new ort.Tensor(tensor.type as 'float32', out as Float32Array, [...dims.slice(0, -2), seq, width]);
}

function halfToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 31) return fraction === 0 ? sign * Infinity : NaN;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}
