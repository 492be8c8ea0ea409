import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../cache/cache-config.js';
import type { CacheLayerPlan } from '../cache/layer-plan.js';
import type { DecoderIo, KvLayerIo } from './decoder-io.js';
import { planInGraph, unpackStrategyFor } from './in-graph-run.js';
import { storeSideOf } from '../onnx/rewrite/in-graph-spec.js';

function layer(i: number, kvHeads: number | string = 4): KvLayerIo {
  return {
    layer: i, packing: 'per-layer', pastKey: `past_key_values.${i}.key`, pastValue: `past_key_values.${i}.value`,
    presentKey: `present.${i}.key`, presentValue: `present.${i}.value`, dtype: 'float32',
    keyShape: ['batch', kvHeads, 'past', 64], valueShape: ['batch', kvHeads, 'past', 64],
  };
}

const IO: DecoderIo = {
  inputIds: 'input_ids', inputIdsType: 'int64', attentionMask: 'attention_mask', attentionMaskType: 'int64', positionIds: 'position_ids',
  positionIdsType: 'int64', logitsToKeep: null, useCacheBranch: null, logits: 'logits', logitsType: 'float32', logitsShape: ['batch', 'seq', 512],
  kvLayers: [0, 1, 2, 3].map((i) => layer(i)), kvDtype: 'float32', states: [], presentMayExceedValidLength: false,
};
const GEOMETRY = { numKeyValueHeads: 4, headDim: 64 };
const ALL: CacheLayerPlan[] = ['quantized', 'quantized', 'quantized', 'quantized'];

function plan(settings: Partial<QuantizedCacheSettings>, layers: readonly CacheLayerPlan[] = ALL): ReturnType<typeof planInGraph> {
  return planInGraph(IO, GEOMETRY, layers, { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, ...settings }, 'bitwise');
}

describe('planInGraph: the rewrite\'s spec for a run, or why the graph path cannot run it', () => {
  it('transformers\' defaults: every planned layer, keys and values as the cache stores them', () => {
    const planned = plan({});
    expect(planned.ok).toBe(true);
    if (!planned.ok) return;
    expect(planned.spec.unpack).toBe('bitwise');
    expect(planned.spec.layers.map((l) => l.layer)).toEqual([0, 1, 2, 3]);
    expect(planned.spec.layers[0]).toMatchObject({
      pastKey: 'past_key_values.0.key', presentValue: 'present.0.value', dtype: 'float32',
      key: { backend: 'quanto', nbits: 4, axis: 0, groupSize: 64, kvHeads: 4, headDim: 64 },
    });
  });

  it('K/V bits apart, per-layer bits and full-precision layers: the quantization plan\'s, per layer and side', () => {
    const planned = plan({
      backend: 'hqq', nbits: 4, axisKey: 1, axisValue: 0,
      extensions: { nbitsKey: 8, nbitsValue: 2, layerMap: [{ layer: 2, nbitsKey: 4, nbitsValue: 4 }, { layer: 3, fullPrecision: true }] },
    }, ['quantized', 'quantized', 'quantized', 'dynamic']);
    expect(planned.ok).toBe(true);
    if (!planned.ok) return;
    expect(planned.spec.layers.map((l) => [l.layer, storeSideOf(l.key).nbits, storeSideOf(l.key).axis, storeSideOf(l.value).nbits, storeSideOf(l.value).axis])).toEqual([
      [0, 8, 1, 2, 0], [1, 8, 1, 2, 0], [2, 4, 1, 4, 0],
    ]);
  });

  it('refuses the extensions whose stores are more than a backend store, naming them', () => {
    expect(plan({ extensions: { sinkTokens: 4 } })).toEqual({ ok: false, reason: expect.stringMatching(/does not express the kvscope extension\(s\) attention sinks/) });
    expect(plan({ extensions: { rotation: 'hadamard', outlierQuantile: 0.99 } })).toEqual({ ok: false, reason: expect.stringMatching(/rotation, outliers/) });
    // at their neutral values they are no extension at all
    expect(plan({ extensions: { sinkTokens: 0, nbitsKey: 4 } }).ok).toBe(true);
  });

  it('refuses a layer the cache plan keeps one side of in full precision, naming the layer and side', () => {
    expect(plan({ extensions: { layerMap: [{ layer: 1, nbitsKey: 4, nbitsValue: 'full' }] } }))
      .toEqual({ ok: false, reason: expect.stringMatching(/^layer 1 keeps its values in full precision \(a layer map's full side/) });
    // beside a runtime format too: the graph would decode that side as the format
    expect(plan({ extensions: { kvFormatKey: 'llama.cpp:q8_0', kvFormatValue: 'llama.cpp:q8_0', layerMap: [{ layer: 2, nbitsKey: 'full', nbitsValue: 4 }] } }))
      .toEqual({ ok: false, reason: expect.stringMatching(/^layer 2 keeps its keys in full precision/) });
    // a whole layer in full precision is a dynamic one, which the rewrite leaves alone
    expect(plan({ extensions: { layerMap: [{ layer: 1, nbitsKey: 'full', nbitsValue: 'full' }] } }, ['quantized', 'dynamic', 'quantized', 'quantized']).ok).toBe(true);
  });

  it('takes HQQ 3-bit (its int32 words cross as they are) and the runtime formats the graph decodes; refuses +rot with its reason', () => {
    expect(plan({ backend: 'hqq', nbits: 3 }).ok).toBe(true);
    const q4 = plan({ extensions: { kvFormatKey: 'llama.cpp:q4_0', kvFormatValue: 'nvfp4' } });
    expect(q4.ok && q4.spec.layers.map((l) => [l.key, l.value])).toEqual([0, 1, 2, 3].map(() => [
      { backend: 'runtime-format', format: 'llama.cpp:q4_0', kvHeads: 4, headDim: 64 }, { backend: 'runtime-format', format: 'nvfp4', kvHeads: 4, headDim: 64 },
    ]));
    expect(plan({ extensions: { kvFormatKey: 'llama.cpp:q4_0+rot', kvFormatValue: 'nvfp4' } })).toEqual({ ok: false, reason: expect.stringMatching(/^llama\.cpp:q4_0\+rot: llama\.cpp's inverse Hadamard rotation/) });
  });

  it('takes heads and head size from the graph when it declares them, else from the config', () => {
    const io: DecoderIo = { ...IO, kvLayers: [layer(0, 'heads'), layer(1, 2)] };
    const planned = planInGraph(io, GEOMETRY, ['quantized', 'quantized'], DEFAULT_QUANTIZED_CACHE_SETTINGS, 'arithmetic');
    expect(planned.ok && planned.spec.layers.map((l) => l.key.kvHeads)).toEqual([4, 2]);
  });

  it('unpacks bitwise on the CPU, with float arithmetic elsewhere (WebGPU has no BitShift)', () => {
    expect(unpackStrategyFor('cpu')).toBe('bitwise');
    expect(unpackStrategyFor('webgpu')).toBe('arithmetic');
    expect(unpackStrategyFor('cuda')).toBe('arithmetic');
  });
});
