import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { encodeModel } from '../../onnx/onnx-model.js';
import { GRAPH_FORMATS, graphFormatReason } from '../../onnx/rewrite/dequantize-format-side.js';
import { rewriteForInGraphDequantize } from '../../onnx/rewrite/in-graph-dequantize.js';
import type { InGraphDequantizeSpec, InGraphFormatSideSpec } from '../../onnx/rewrite/in-graph-spec.js';
import { toyAttentionModel } from '../../onnx/rewrite/test-support/toy-attention.js';
import { RUNTIME_FORMATS, runtimeFormat } from '../../quant/runtime-formats/registry.js';
import type { FormatGeometry } from '../../quant/runtime-formats/types.js';
import { float32ToFloat16Bits, float16BitsToFloat32 } from '../../tensor/float16.js';

/**
 * Graph = host bit for bit for every runtime format the graph path takes (issue 27, point 3): the
 * rows are encoded with the format (as WriteOnceLayer stores them: token-major `[tokens·kvHeads,
 * rowBytes]`), the rewritten toy decoder dequantizes them in ONNX Runtime, and what its attention
 * reads must equal the host's decodeRows (rounded to the model's dtype) in every bit.
 */
const KV_HEADS = 2;
const TOKENS = 37;

function randomValues(count: number, seed: number, spread: number): Float32Array {
  let state = seed >>> 0;
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const u = state / 2 ** 32;
    // heavy tails and exact zeros, as K/V have: outliers, tiny values, whole rows of 0
    out[i] = i % 97 === 0 ? 0 : (u - 0.5) * spread * (i % 13 === 0 ? 40 : 1) * (i % 29 === 0 ? 1e-4 : 1);
  }
  return out;
}

async function runBoth(format: string, headDim: number, dtype: 'float32' | 'float16', calculate: boolean): Promise<{ graph: Uint32Array | Uint16Array; host: Uint32Array | Uint16Array }> {
  const side: InGraphFormatSideSpec = { backend: 'runtime-format', format, kvHeads: KV_HEADS, headDim };
  const spec: InGraphDequantizeSpec = {
    unpack: 'bitwise',
    layers: [{ layer: 0, pastKey: 'past_key_values.0.key', pastValue: 'past_key_values.0.value', presentKey: 'present.0.key', presentValue: 'present.0.value', dtype, key: side, value: side }],
  };
  const { model, io } = rewriteForInGraphDequantize(toyAttentionModel(1, KV_HEADS, headDim, dtype), spec);
  const session = await ort.InferenceSession.create(encodeModel(model));
  try {
    const f = runtimeFormat(format);
    const feeds: Record<string, ort.Tensor> = {};
    const expected: Record<'key' | 'value', Float32Array> = { key: new Float32Array(0), value: new Float32Array(0) };
    for (const part of ['key', 'value'] as const) {
      const geometry: FormatGeometry = { headDim, dtype, side: part };
      // [tokens, kvHeads, headDim]: token-major, as the cache stores the rows
      let values = randomValues(TOKENS * KV_HEADS * headDim, part === 'key' ? 7 : 11, part === 'key' ? 6 : 300);
      if (dtype === 'float16') values = float16BitsToFloat32(float32ToFloat16Bits(values));
      const params = f.tensorParams(values, geometry, calculate);
      const rowBytes = f.rowBytes(geometry);
      const bytes = new Uint8Array(TOKENS * KV_HEADS * rowBytes);
      f.encodeRows(values, TOKENS * KV_HEADS, geometry, params, bytes);
      const decoded = new Float32Array(values.length);
      f.decodeRows(bytes, TOKENS * KV_HEADS, geometry, params, decoded);
      // the host's SeqBuffer holds [1, kvHeads, tokens, headDim] in the model's dtype
      const byHead = new Float32Array(decoded.length);
      for (let t = 0; t < TOKENS; t++) {
        for (let h = 0; h < KV_HEADS; h++) byHead.set(decoded.subarray((t * KV_HEADS + h) * headDim, (t * KV_HEADS + h + 1) * headDim), (h * TOKENS + t) * headDim);
      }
      expected[part] = byHead;
      const names = io.layers[0]![part];
      feeds[names.codes] = new ort.Tensor('uint8', bytes, [TOKENS * KV_HEADS, rowBytes]);
      feeds[names.scale] = new ort.Tensor('float32', Float32Array.of(params.tensorScale), [1]);
      feeds[names.residual] = dtype === 'float16' ? new ort.Tensor('float16', new Uint16Array(0), [1, KV_HEADS, 0, headDim]) : new ort.Tensor('float32', new Float32Array(0), [1, KV_HEADS, 0, headDim]);
      feeds[`new_${part}.0`] = dtype === 'float16' ? new ort.Tensor('float16', new Uint16Array(KV_HEADS * headDim), [1, KV_HEADS, 1, headDim]) : new ort.Tensor('float32', new Float32Array(KV_HEADS * headDim), [1, KV_HEADS, 1, headDim]);
    }
    const out = await session.run(feeds);
    const bits = (part: 'key' | 'value'): { graph: Uint32Array | Uint16Array; host: Uint32Array | Uint16Array } => {
      const attended = out[`attended.0.${part}`]!;
      // attended = [history | the one new row] per head; keep the history
      const data = attended.data as Float32Array | Uint16Array;
      const graph = dtype === 'float16' ? new Uint16Array(KV_HEADS * TOKENS * headDim) : new Uint32Array(KV_HEADS * TOKENS * headDim);
      const source = dtype === 'float16' ? (data as Uint16Array) : new Uint32Array((data as Float32Array).buffer, (data as Float32Array).byteOffset, data.length);
      for (let h = 0; h < KV_HEADS; h++) graph.set(source.subarray(h * (TOKENS + 1) * headDim, (h * (TOKENS + 1) + TOKENS) * headDim), h * TOKENS * headDim);
      const host = dtype === 'float16' ? float32ToFloat16Bits(expected[part]) : new Uint32Array(expected[part].buffer);
      return { graph, host };
    };
    const key = bits('key');
    const value = bits('value');
    const join = <T extends Uint32Array | Uint16Array>(a: T, b: T): T => {
      const out = new (a.constructor as new (n: number) => T)(a.length + b.length);
      out.set(a);
      out.set(b, a.length);
      return out;
    };
    return { graph: join(key.graph, value.graph), host: join(key.host, value.host) };
  } finally {
    await session.release();
  }
}

function firstDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return -2;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

describe('runtime formats dequantized in the graph equal the host\'s decodeRows bit for bit', () => {
  for (const format of GRAPH_FORMATS) {
    for (const headDim of [64, 128]) {
      for (const dtype of ['float32', 'float16'] as const) {
        it(`${format}, head_dim ${headDim}, ${dtype}`, async () => {
          const calculate = runtimeFormat(format).tensorScale !== 'none';
          const { graph, host } = await runBoth(format, headDim, dtype, calculate);
          expect(graph.length).toBe(KV_HEADS * TOKENS * headDim * 2);
          expect(firstDifference(graph, host), 'first element whose bits differ').toBe(-1);
        });
      }
    }
  }

  it('vLLM FP8 with its default scale 1.0 saturates and rounds in the graph as on the host', async () => {
    for (const format of ['vllm:fp8_e4m3', 'vllm:fp8_e5m2']) {
      const { graph, host } = await runBoth(format, 64, 'float32', false);
      expect(firstDifference(graph, host), format).toBe(-1);
    }
  });

  it('every other format says why it stays on the host', () => {
    const hostOnly = RUNTIME_FORMATS.map((f) => f.name).filter((name) => !GRAPH_FORMATS.includes(name));
    expect(hostOnly.length).toBeGreaterThan(0);
    for (const name of hostOnly) expect(graphFormatReason(name), name).toMatch(/stays on the host/);
    for (const name of GRAPH_FORMATS) expect(graphFormatReason(name)).toBeNull();
  });
});
