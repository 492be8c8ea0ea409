import * as ort from 'onnxruntime-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeSideOf, zeroInputOf, type InGraphDequantizeSpec, type InGraphSideIo, type InGraphSideSpec, type UnpackStrategy } from '../../onnx/rewrite/in-graph-spec.js';
import { int32View } from '../../engine/graph-kv-lane.js';
import { quantizerFor } from '../../quant/registry.js';
import type { QuantizedTensor } from '../../quant/types.js';
import { float32ToHalfBitsInto, halfBitsToFloat32Into } from '../../tensor/float16-bits.js';
import { kvTensor, type KvDtype } from '../../tensor/kv-tensor.js';
import { IN_GRAPH_DISABLED_OPTIMIZERS } from '../model/open-in-graph-model.js';
import { ensureInGraphModel, inGraphSessionConfig } from '../onnx/in-graph-model.js';

/**
 * STYLE.md §16's check of the in-graph rewrite: the source graph and its rewrite run on the same
 * inputs and must agree bit for bit. The source is fed the past as `--dequantize host` feeds it,
 * `[dequant(store) | residual]` dequantized in JavaScript; the rewrite is fed the store and the residual
 * themselves. Both then run one decode step; their logits and the new rows (the source's last present
 * row, the rewrite's `new_rows`) are compared as bit patterns.
 *
 * The K/V come from the model itself: a prefill of `prefill + residual` tokens from an empty past;
 * the first `prefill` rows of every layer are quantized with that layer's side spec (each layer and
 * side may have its own, so one graph covers many settings), the rest is the residual.
 */
export interface ParityCase {
  readonly modelPath: string;
  readonly dtype: KvDtype;
  readonly kvHeads: number;
  readonly headDim: number;
  /** per layer: key and value settings */
  readonly sides: readonly { readonly key: Omit<InGraphSideSpec, 'kvHeads' | 'headDim'>; readonly value: Omit<InGraphSideSpec, 'kvHeads' | 'headDim'> }[];
  readonly prefill: number;
  readonly residual: number;
  readonly unpack: UnpackStrategy;
  readonly vocabSize: number;
}

export interface ParityResult {
  /** logits elements whose bits differ */
  readonly logitDifferences: number;
  readonly logitCount: number;
  /** new-row elements (all layers, keys and values) whose bits differ */
  readonly newRowDifferences: number;
  readonly gated: readonly boolean[];
  /** per layer: whether its values' dequantization also waits for its keys' attention weights */
  readonly valuesAfterKeys: readonly boolean[];
}

export async function runParity(c: ParityCase): Promise<ParityResult> {
  const layers = c.sides.length;
  const spec: InGraphDequantizeSpec = {
    unpack: c.unpack,
    layers: c.sides.map((side, layer) => ({
      layer, pastKey: `past_key_values.${layer}.key`, pastValue: `past_key_values.${layer}.value`, presentKey: `present.${layer}.key`, presentValue: `present.${layer}.value`,
      dtype: c.dtype,
      key: { ...side.key, kvHeads: c.kvHeads, headDim: c.headDim },
      value: { ...side.value, kvHeads: c.kvHeads, headDim: c.headDim },
    })),
  };
  // Through the on-disk cache, as runs open it: the weights are read from the source's folder in place.
  const cacheDir = mkdtempSync(join(tmpdir(), 'kvscope-in-graph-'));
  const rewrite = await ensureInGraphModel(c.modelPath, spec, cacheDir);
  const options = { extra: { session: { force_spinning_stop: '1' } } };
  const source = await ort.InferenceSession.create(c.modelPath, options);
  const rewritten = await ort.InferenceSession.create(rewrite.path, {
    ...options, extra: {
      session: { ...options.extra.session, ...inGraphSessionConfig(rewrite) }, optimization: { disable_specified_optimizers: IN_GRAPH_DISABLED_OPTIMIZERS.join(';') },
    },
  });
  try {
    const total = c.prefill + c.residual;
    const { kvHeads: H, headDim: D } = c;
    const prefillFeeds = tokenFeeds(Array.from({ length: total }, (_, i) => 1 + ((i * 37 + 11) % (c.vocabSize - 1))), 0);
    for (let i = 0; i < layers; i++) {
      prefillFeeds[`past_key_values.${i}.key`] = kvFeed(c.dtype, [1, H, 0, D], new Float32Array(0));
      prefillFeeds[`past_key_values.${i}.value`] = kvFeed(c.dtype, [1, H, 0, D], new Float32Array(0));
    }
    const prefill = await source.run(prefillFeeds);
    const next = tokenFeeds([77], total);
    const hostFeeds: Record<string, ort.Tensor> = { ...next };
    const graphFeeds: Record<string, ort.Tensor> = { ...next };
    for (let i = 0; i < layers; i++) {
      for (const part of ['key', 'value'] as const) {
        const full = floats(prefill[`present.${i}.${part}`]!);
        const head = sliceRows(full, H, total, D, 0, c.prefill);
        const tail = sliceRows(full, H, total, D, c.prefill, total);
        const side = storeSideOf(spec.layers[i]![part]);
        const quantizer = quantizerFor(side.backend);
        const store = quantizer.quantize(kvTensor([1, H, c.prefill, D], c.dtype, head), { nbits: side.nbits, axis: side.axis, groupSize: side.groupSize });
        const history = concatRows(quantizer.dequantize(store).data, tail, H, c.prefill, c.residual, D);
        hostFeeds[`past_key_values.${i}.${part}`] = kvFeed(c.dtype, [1, H, total, D], history);
        const io = rewrite.io.layers[i]![part];
        Object.assign(graphFeeds, storeFeeds(io, store, c.dtype));
        graphFeeds[io.residual] = kvFeed(c.dtype, [1, H, c.residual, D], tail);
      }
    }
    const host = await source.run(hostFeeds);
    const graph = await rewritten.run(graphFeeds);
    const logitDifferences = bitDifferences(bits(host['logits']!), bits(graph['logits']!));
    let newRowDifferences = 0;
    for (let i = 0; i < layers; i++) {
      for (const part of ['key', 'value'] as const) {
        const present = host[`present.${i}.${part}`]!;
        const last = sliceBits(bits(present), H, total + 1, D, total);
        newRowDifferences += bitDifferences(last, bits(graph[rewrite.io.layers[i]![part].newRows]!));
      }
    }
    return { logitDifferences, logitCount: host['logits']!.size, newRowDifferences, gated: rewrite.io.layers.map((layer) => layer.gated), valuesAfterKeys: rewrite.io.layers.map((layer) => layer.valuesAfterKeys) };
  } finally {
    await source.release();
    await rewritten.release();
    rmSync(cacheDir, { recursive: true, force: true });
  }
}

function tokenFeeds(ids: readonly number[], past: number): Record<string, ort.Tensor> {
  const n = ids.length;
  return {
    input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, (id) => BigInt(id)), [1, n]),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(past + n).fill(1n), [1, past + n]),
    position_ids: new ort.Tensor('int64', BigInt64Array.from({ length: n }, (_, i) => BigInt(past + i)), [1, n]),
  };
}

function storeFeeds(io: InGraphSideIo, store: QuantizedTensor, dtype: KvDtype): Record<string, ort.Tensor> {
  const cols = store.gridShape[1];
  return {
    [io.codes]: store.backend === 'hqq' && store.params.nbits === 3
      ? new ort.Tensor('int32', int32View(store.packed), [store.packed.length / 4 / cols, cols])
      : new ort.Tensor('uint8', store.packed, [store.packed.length / cols, cols]),
    [io.scale]: kvFeed(dtype, [...store.paramShape], store.scale),
    [zeroInputOf(io)]: kvFeed(dtype, [...store.paramShape], store.zero),
  };
}

function kvFeed(dtype: KvDtype, dims: number[], values: Float32Array): ort.Tensor {
  if (dtype === 'float32') return new ort.Tensor('float32', values, dims);
  const half = new Uint16Array(values.length);
  float32ToHalfBitsInto(values, 0, half, 0, values.length);
  return new ort.Tensor('float16', half, dims);
}

function floats(tensor: ort.Tensor): Float32Array {
  if (tensor.type === 'float32') return tensor.data as Float32Array;
  const out = new Float32Array(tensor.size);
  halfBitsToFloat32Into(tensor.data as Uint16Array, 0, out, 0, tensor.size);
  return out;
}

function bits(tensor: ort.Tensor): Uint16Array | Uint32Array {
  const data = tensor.data as Float32Array | Uint16Array;
  return data instanceof Float32Array ? new Uint32Array(data.buffer, data.byteOffset, data.length) : data;
}

/** `x[:, :, from:to, :]` of a `[1, heads, seq, dim]` float array */
function sliceRows(x: Float32Array, heads: number, seq: number, dim: number, from: number, to: number): Float32Array {
  const out = new Float32Array(heads * (to - from) * dim);
  for (let h = 0; h < heads; h++) out.set(x.subarray((h * seq + from) * dim, (h * seq + to) * dim), h * (to - from) * dim);
  return out;
}

function sliceBits(x: Uint16Array | Uint32Array, heads: number, seq: number, dim: number, from: number): Uint16Array | Uint32Array {
  const rows = seq - from;
  const out = x instanceof Uint16Array ? new Uint16Array(heads * rows * dim) : new Uint32Array(heads * rows * dim);
  for (let h = 0; h < heads; h++) out.set(x.subarray((h * seq + from) * dim, (h * seq + seq) * dim), h * rows * dim);
  return out;
}

function concatRows(a: Float32Array, b: Float32Array, heads: number, aRows: number, bRows: number, dim: number): Float32Array {
  const out = new Float32Array(heads * (aRows + bRows) * dim);
  for (let h = 0; h < heads; h++) {
    out.set(a.subarray(h * aRows * dim, (h + 1) * aRows * dim), h * (aRows + bRows) * dim);
    out.set(b.subarray(h * bRows * dim, (h + 1) * bRows * dim), (h * (aRows + bRows) + aRows) * dim);
  }
  return out;
}

function bitDifferences(a: Uint16Array | Uint32Array, b: Uint16Array | Uint32Array): number {
  if (a.length !== b.length) return Math.max(a.length, b.length);
  let count = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) count++;
  return count;
}
