import { describe, expect, it } from 'vitest';
import type { DecoderIo } from '../engine/decoder-io.js';
import { bytesSource } from '../onnx/byte-source.js';
import { readGraphHeader, type GraphHeader } from '../onnx/graph-header.js';
import { encodeModel, type ModelProto } from '../onnx/onnx-model.js';
import { keepLogitsRows } from '../onnx/rewrite/logits-rows.js';
import { logitsRowsSupport } from './logits-rows-support.js';
import { LAYOUT_LABELS, type ModelLayout } from './model-layout.js';
import { tinyDecoder } from './test-support/tiny-decoder.js';

const header = (model: ModelProto): Promise<GraphHeader> => readGraphHeader(bytesSource(encodeModel(model)), 'model.onnx');
/** What logitsRowsSupport reads of the I/O: the logits' name and whether the graph takes num_logits_to_keep. */
const io = (logitsToKeep: string | null) => ({ logits: 'logits', logitsToKeep }) as DecoderIo;
const layout = (prefillGraph: string | null = null): ModelLayout => ({
  kind: prefillGraph === null ? 'optimum' : 'optimum-split', label: LAYOUT_LABELS[prefillGraph === null ? 'optimum' : 'optimum-split'],
  configFile: 'config.json', crossCheck: null, graph: 'onnx/model.onnx', prefillGraph, dtype: null,
});

describe('whether a run computes only the logits rows it reads, from the graph header (issue 23, point 4)', () => {
  it('derived: a decoder without num_logits_to_keep whose head is found (plain attention, GroupQueryAttention, fp16 logits)', async () => {
    for (const options of [{}, { attention: 'gqa' as const }, { logitsType: 'float16' as const }]) {
      expect(logitsRowsSupport(await header(tinyDecoder(options)), io(null), layout()), JSON.stringify(options)).toEqual({ kind: 'derived' });
    }
  });

  it('input: a graph that takes it already', async () => {
    const model = keepLogitsRows(tinyDecoder());
    expect(logitsRowsSupport(await header(model), io('num_logits_to_keep'), layout())).toEqual({ kind: 'input' });
  });

  it('every row, with the reason: a merged decoder (logits from an If), the legacy pair (the prefill on its own graph)', async () => {
    const merged = logitsRowsSupport(await header(tinyDecoder({ merged: true })), io(null), layout());
    expect(merged).toEqual({ kind: 'every-row', reason: 'the LM head before `logits` was not found (the If node writing logits is not a row-wise op)' });
    const pair = logitsRowsSupport(await header(tinyDecoder()), io(null), layout('decoder_model.onnx'));
    expect(pair).toEqual({ kind: 'every-row', reason: 'the Optimum decoder pair runs its prefill on a second graph, which is not derived' });
  });
});
