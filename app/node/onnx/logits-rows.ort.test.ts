import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeModel, encodeModel, type ModelProto } from '../../onnx/onnx-model.js';
import { keepLogitsRows } from '../../onnx/rewrite/logits-rows.js';
import { findLmHead, lmHeadModel, withHiddenOutput } from '../../onnx/rewrite/lm-head-split.js';
import { buildLlamaModel } from '../../synthetic/llama-graph.js';
import { SCALE_DATA_FILE, scaleWeightPlan, weightChunks } from '../../synthetic/scale-weights.js';
import { syntheticModelSpec, type SyntheticModelKind, type SyntheticModelSpec } from '../../synthetic/synthetic-spec.js';
import { syntheticTokenizer } from '../../synthetic/synthetic-tokenizer.js';
import { hasShared, sharedDir } from '../golden.js';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A scale model cut to one layer (same vocabulary, head geometry and head type), written with its data file. */
function oneLayer(kind: SyntheticModelKind): { dir: string; source: ModelProto } {
  const full = syntheticModelSpec(kind);
  const spec: SyntheticModelSpec = { ...full, numLayers: 1, layerTypes: full.layerTypes.slice(0, 1) };
  const plan = scaleWeightPlan(spec, syntheticTokenizer(spec).mutedTokenIds);
  const dir = mkdtempSync(join(tmpdir(), 'kvscope-logits-rows-'));
  folders.push(dir);
  const chunks: Uint8Array[] = [];
  for (const chunk of weightChunks(spec, plan)) chunks.push(chunk.slice());
  writeFileSync(join(dir, SCALE_DATA_FILE), Buffer.concat(chunks));
  return { dir, source: buildLlamaModel(spec, plan.weights) };
}

type Feeds = Record<string, ort.Tensor>;

/** A prefill of `ids` on an empty past: every layer's past [1, kvHeads, 0, headDim]. */
function prefillFeeds(session: ort.InferenceSession, ids: readonly number[]): Feeds {
  const n = ids.length;
  const feeds: Feeds = {
    input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, n]),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(n).fill(1n), [1, n]),
    position_ids: new ort.Tensor('int64', BigInt64Array.from({ length: n }, (_, i) => BigInt(i)), [1, n]),
  };
  for (const input of session.inputMetadata) {
    if (!input.name.startsWith('past_key_values.') || !input.isTensor) continue;
    const [, heads, , headDim] = input.shape as [unknown, number, unknown, number];
    feeds[input.name] = new ort.Tensor('float32', new Float32Array(0), [1, heads, 0, headDim]);
  }
  return feeds;
}

/** Runs a graph file once and returns its logits (bytes) and dims, then frees the session. */
async function logitsOf(path: string, ids: readonly number[], keep?: number): Promise<{ bytes: Uint8Array; dims: readonly number[] }> {
  const session = await ort.InferenceSession.create(path);
  try {
    const feeds = prefillFeeds(session, ids);
    if (keep !== undefined) feeds['num_logits_to_keep'] = new ort.Tensor('int64', BigInt64Array.of(BigInt(keep)), []);
    const logits = (await session.run(feeds, ['logits']))['logits']!;
    const data = logits.data as Float32Array;
    return { bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice(), dims: logits.dims };
  } finally {
    await session.release();
  }
}

/** The source's last `rows` rows of [1, n, vocab], as bytes. */
function lastRows(bytes: Uint8Array, dims: readonly number[], rows: number): Uint8Array {
  const rowBytes = 4 * dims[2]!;
  return bytes.subarray(bytes.byteLength - rows * rowBytes);
}

async function expectSameRows(dir: string, source: ModelProto, ids: readonly number[]): Promise<void> {
  const sourcePath = join(dir, 'source.onnx');
  const rewrittenPath = join(dir, 'rewritten.onnx');
  writeFileSync(sourcePath, encodeModel(source));
  writeFileSync(rewrittenPath, encodeModel(keepLogitsRows(source)));
  const all = await logitsOf(sourcePath, ids);
  for (const rows of [1, 3, ids.length]) {
    const kept = await logitsOf(rewrittenPath, ids, rows);
    expect(kept.dims).toEqual([1, rows, all.dims[2]]);
    expect(Buffer.compare(kept.bytes, lastRows(all.bytes, all.dims, rows)), `the last ${rows} rows, bit for bit`).toBe(0);
  }
}

const IDS = [1, 300, 17, 4_000, 99, 12, 512, 7, 2_048];

describe('keepLogitsRows: the rows it computes are the source\'s, bit for bit (STYLE.md §16)', () => {
  it('on the Qwen2.5-0.5B geometry (tied head: Gemm on the embedding), one layer, 151,936-token vocabulary', async () => {
    const { dir, source } = oneLayer('synthetic-qwen2.5-0.5b');
    await expectSameRows(dir, source, IDS);
  }, 120_000);

  it('on the 8B-KV geometry with a 128k vocabulary (untied: MatMul head)', async () => {
    const { dir, source } = oneLayer('synthetic-8b-kv-128k');
    await expectSameRows(dir, source, IDS);
  }, 120_000);

  const stories = hasShared() ? join(sharedDir(), 'models', 'stories260k', 'onnx', 'model.onnx') : '';
  it.runIf(stories !== '' && existsSync(stories))("on stories260k's Optimum export", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvscope-logits-rows-'));
    folders.push(dir);
    await expectSameRows(dir, decodeModel(readFileSync(stories)), IDS.map((id) => id % 512));
  }, 120_000);

  it('leaves a graph that already takes num_logits_to_keep as it is, and never changes its source', () => {
    const { source } = oneLayer('synthetic-8b-kv-128k');
    const before = encodeModel(source);
    const rewritten = keepLogitsRows(source);
    expect(Buffer.compare(encodeModel(source), before)).toBe(0);
    expect(rewritten.graph!.input.map((input) => input.name)).toContain('num_logits_to_keep');
    expect(keepLogitsRows(rewritten)).toBe(rewritten);
  }, 120_000);
});

describe('the compact reference\'s LM head on a graph that keeps logits rows (lm-head-split.ts)', () => {
  it('on the Qwen2.5-0.5B geometry (Flatten, Gemm on the embedding, Reshape to Shape(hidden)): the head is found and gives the kept logits bit for bit', async () => {
    const { dir, source } = oneLayer('synthetic-qwen2.5-0.5b');
    const rewritten = keepLogitsRows(source);
    const head = findLmHead(rewritten, 'logits');
    if ('reason' in head) throw new Error(head.reason);
    // The hidden state is the kept rows themselves: the head reads their shape too, so it starts above the Flatten.
    expect(head.nodes.map((node) => node.opType)).toEqual(expect.arrayContaining(['Flatten', 'Gemm', 'Shape', 'Reshape']));
    const modelPath = join(dir, 'with-hidden.onnx');
    const headPath = join(dir, 'lm-head.onnx');
    writeFileSync(modelPath, encodeModel(withHiddenOutput(rewritten, head)));
    writeFileSync(headPath, encodeModel(lmHeadModel(rewritten, head)));
    const session = await ort.InferenceSession.create(modelPath);
    const headSession = await ort.InferenceSession.create(headPath);
    try {
      const feeds = prefillFeeds(session, IDS);
      feeds['num_logits_to_keep'] = new ort.Tensor('int64', BigInt64Array.of(3n), []);
      const outputs = await session.run(feeds, ['logits', head.hidden]);
      const hidden = outputs[head.hidden]!;
      expect(hidden.dims).toEqual([1, 3, 896]);
      const again = (await headSession.run({ [head.hidden]: hidden }, ['logits']))['logits']!;
      const logits = outputs['logits']!.data as Float32Array;
      const recomputed = again.data as Float32Array;
      expect(again.dims).toEqual(outputs['logits']!.dims);
      expect(Buffer.compare(Buffer.from(recomputed.buffer, recomputed.byteOffset, recomputed.byteLength), Buffer.from(logits.buffer, logits.byteOffset, logits.byteLength))).toBe(0);
    } finally {
      await session.release();
      await headSession.release();
    }
  }, 120_000);
});
