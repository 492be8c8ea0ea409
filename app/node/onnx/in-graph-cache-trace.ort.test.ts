import * as ort from 'onnxruntime-node';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import { QuantizedLayer } from '../../cache/quantized-layer.js';
import { StoredQuantizedLayer } from '../../cache/stored-quantized-layer.js';
import { firstBitDifference } from '../../cache/test-support/compare.js';
import { sliceSeq } from '../../cache/test-support/tensors.js';
import { emptyStoreShapes, zeroInputOf } from '../../onnx/rewrite/in-graph-spec.js';
import { encodeModel } from '../../onnx/onnx-model.js';
import { rewriteForInGraphDequantize } from '../../onnx/rewrite/in-graph-dequantize.js';
import { toyAttentionModel, toySpec } from '../../onnx/rewrite/test-support/toy-attention.js';
import { quantizerFor } from '../../quant/registry.js';
import type { QuantBackend } from '../../quant/types.js';
import { kvTensor, type KvShape, type KvTensor } from '../../tensor/kv-tensor.js';
import { goldenPath, hasShared, readNpyFile } from '../golden.js';

/**
 * golden/cache_trace on the in-graph path: the trace's K/V (one layer, [1, 4, 340, 64], prefill 40 and
 * 300 single-token steps, nbits 4, group 64, residual 128, axes 0) driven through a StoredQuantizedLayer,
 * whose stored parts are fed to a rewritten graph every step; the graph's view of the history (the
 * toy graph's `attended` output: exactly what attention reads) must be, bit for bit, what the host
 * path's QuantizedLayer.update returns, at every step and for both backends; and, for quanto (bit-exact
 * against the library), the golden snapshots themselves.
 */
interface TraceConfig { readonly prefill: number; readonly decode_steps: number; readonly nbits: number; readonly q_group_size: number; readonly residual_length: number }

function asKv(path: string): KvTensor {
  const npy = readNpyFile(goldenPath(path));
  return kvTensor(npy.shape as unknown as KvShape, 'float32', npy.data as Float32Array);
}

describe.skipIf(!hasShared()).each(['quanto', 'hqq'] as const)('cache trace on the in-graph path: %s', (backend: QuantBackend) => {
  it('every step\'s attended history equals QuantizedLayer.update\'s return bit for bit; the flushes land at 128 and 256', async () => {
    const config = (JSON.parse(readFileSync(goldenPath('cache_trace', 'trace.json'), 'utf8')) as { config: TraceConfig }).config;
    const fullK = asKv('cache_trace/trace_K.npy');
    const fullV = asKv('cache_trace/trace_V.npy');
    const [, heads, , headDim] = fullK.shape;
    const side = { backend, nbits: config.nbits, axis: 0, groupSize: config.q_group_size, kvHeads: heads, headDim };
    const { model, io } = rewriteForInGraphDequantize(toyAttentionModel(1, heads, headDim), toySpec(1, side, side));
    const session = await ort.InferenceSession.create(encodeModel(model));
    const quantizer = quantizerFor(backend);
    const settings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend, nbits: config.nbits, groupSize: config.q_group_size, residualLength: config.residual_length };
    const host = new QuantizedLayer(quantizer, settings);
    const stored = new StoredQuantizedLayer(quantizer, {
      key: { nbits: config.nbits, axis: 0, groupSize: config.q_group_size }, value: { nbits: config.nbits, axis: 0, groupSize: config.q_group_size }, residualLength: config.residual_length,
    });
    const names = io.layers[0]!;
    const flushSteps: number[] = [];
    try {
      for (let step = 0; step <= config.decode_steps; step++) {
        const [start, end] = step === 0 ? [0, config.prefill] : [config.prefill + step - 1, config.prefill + step];
        const k = sliceSeq(fullK, start, end);
        const v = sliceSeq(fullV, start, end);
        const feeds: Record<string, ort.Tensor> = {
          'new_key.0': new ort.Tensor('float32', k.data, [...k.shape]),
          'new_value.0': new ort.Tensor('float32', v.data, [...v.shape]),
        };
        for (const part of ['key', 'value'] as const) {
          const parts = stored.stored(part);
          const n = names[part];
          if (parts.store === null) {
            const empty = emptyStoreShapes(side);
            feeds[n.codes] = new ort.Tensor('uint8', new Uint8Array(0), empty.codes);
            feeds[n.scale] = new ort.Tensor('float32', new Float32Array(0), empty.params);
            feeds[zeroInputOf(n)] = new ort.Tensor('float32', new Float32Array(0), empty.params);
          } else {
            const cols = parts.store.gridShape[1];
            feeds[n.codes] = new ort.Tensor('uint8', parts.store.packed, [parts.store.packed.length / cols, cols]);
            feeds[n.scale] = new ort.Tensor('float32', parts.store.scale, [...parts.store.paramShape]);
            feeds[zeroInputOf(n)] = new ort.Tensor('float32', parts.store.zero, [...parts.store.paramShape]);
          }
          feeds[n.residual] = new ort.Tensor('float32', parts.residualTokens === 0 ? new Float32Array(0) : parts.residual as Float32Array, [1, heads, parts.residualTokens, headDim]);
        }
        const out = await session.run(feeds);
        const returned = host.update(k, v);
        const flushesBefore = stored.flushCount;
        stored.append(
          { shape: k.shape, dtype: 'float32', data: out[names.key.newRows]!.data as Float32Array },
          { shape: v.shape, dtype: 'float32', data: out[names.value.newRows]!.data as Float32Array },
        );
        if (stored.flushCount > flushesBefore) flushSteps.push(step);
        expect(firstBitDifference(out['attended.0.key']!.data as Float32Array, returned.key.data), `keys at step ${step}`).toBe(-1);
        expect(firstBitDifference(out['attended.0.value']!.data as Float32Array, returned.value.data), `values at step ${step}`).toBe(-1);
        if (backend === 'quanto' && [1, 129, 300].includes(step)) {
          expect(firstBitDifference(out['attended.0.key']!.data as Float32Array, asKv(`cache_trace/trace_quanto_returned_K_step${step}.npy`).data), `golden K at ${step}`).toBe(-1);
          expect(firstBitDifference(out['attended.0.value']!.data as Float32Array, asKv(`cache_trace/trace_quanto_returned_V_step${step}.npy`).data), `golden V at ${step}`).toBe(-1);
        }
      }
      expect(flushSteps).toEqual([128, 256]);
      expect(stored.events).toEqual(host.events);
    } finally {
      host.dispose();
      stored.dispose();
      await session.release();
    }
  }, 120_000);
});
