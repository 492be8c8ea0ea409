import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { IN_PLACE_MIN_BYTES } from '../../model-layout/embedded-weights.js';
import { decodeModel } from '../../onnx/onnx-model.js';
import { hasShared, sharedDir } from '../golden.js';
import { ensureSyntheticModel } from '../synthetic/ensure-synthetic-model.js';
import { testCacheDir } from '../synthetic/test-support/synthetic-session.js';
import { ensureInPlaceModel } from './in-graph-model.js';

/*
 * A graph whose weights are inside its .onnx, run through ensureInPlaceModel (issue 23: eval and a
 * sweep's jobs read them in place, memory-mapped, instead of each session parsing a copy): every
 * output of a prefill and the decode steps after it is the source graph's, bit for bit, with and
 * without prepacking (STYLE.md §16: both graphs on the same feeds).
 */

const cacheDir = mkdtempSync(join(tmpdir(), 'kvscope-in-place-'));
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

type Feeds = Record<string, ort.Tensor>;

/** Empty pasts in the graph's own KV dtype, [1, heads, 0, headDim]. */
function emptyPasts(session: ort.InferenceSession): Feeds {
  const feeds: Feeds = {};
  for (const input of session.inputMetadata) {
    if (!input.isTensor || !input.name.startsWith('past_key_values.')) continue;
    const [, heads, , headDim] = input.shape as [unknown, number, unknown, number];
    feeds[input.name] = input.type === 'float16'
      ? new ort.Tensor('float16', new Uint16Array(0), [1, heads, 0, headDim])
      : new ort.Tensor('float32', new Float32Array(0), [1, heads, 0, headDim]);
  }
  return feeds;
}

/** Every output's bytes for a prefill of `ids` and `steps` greedy decode steps after it, each step's presents fed back. */
async function trace(path: string, externalDataFolder: string | null, prepacked: boolean, ids: readonly number[], steps: number): Promise<Buffer[]> {
  const session = await ort.InferenceSession.create(path, {
    extra: {
      session: {
        ...(prepacked ? {} : { disable_prepacking: '1' }),
        ...(externalDataFolder === null ? {} : { model_external_initializers_file_folder_path: externalDataFolder }),
      },
    },
  });
  try {
    const names = new Set(session.inputNames);
    const bytes: Buffer[] = [];
    let past = emptyPasts(session);
    let fed = [...ids];
    let position = 0;
    for (let step = 0; step <= steps; step++) {
      const n = fed.length;
      const feeds: Feeds = { ...past, input_ids: new ort.Tensor('int64', BigInt64Array.from(fed, BigInt), [1, n]) };
      if (names.has('attention_mask')) feeds['attention_mask'] = new ort.Tensor('int64', new BigInt64Array(position + n).fill(1n), [1, position + n]);
      if (names.has('position_ids')) feeds['position_ids'] = new ort.Tensor('int64', BigInt64Array.from({ length: n }, (_, i) => BigInt(position + i)), [1, n]);
      const outputs = await session.run(feeds);
      for (const name of session.outputNames) {
        const data = outputs[name]!.data as Float32Array | Uint16Array;
        bytes.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
      }
      past = {};
      for (const name of session.outputNames) if (name.startsWith('present.')) past[name.replace('present.', 'past_key_values.')] = outputs[name]!;
      const logits = outputs['logits']!;
      const vocab = logits.dims[2]!;
      const last = Array.from(logits.data as ArrayLike<number>).slice((n - 1) * vocab);
      position += n;
      fed = [last.indexOf(Math.max(...last))];
    }
    return bytes;
  } finally {
    await session.release();
  }
}

async function expectSameAsSource(source: string, ids: readonly number[]): Promise<void> {
  const derived = await ensureInPlaceModel(source, cacheDir);
  // The derived graph holds none of the weights: every large initializer points into the source .onnx.
  const sourceGraph = decodeModel(readFileSync(source));
  const embedded = sourceGraph.graph!.initializer.reduce((sum, tensor) => sum + (tensor.rawData.byteLength >= IN_PLACE_MIN_BYTES ? tensor.rawData.byteLength : 0), 0);
  expect(embedded).toBeGreaterThan(0.5 * statSync(source).size);
  const graph = decodeModel(readFileSync(derived.path));
  const large = graph.graph!.initializer.filter((tensor) => tensor.externalData.length > 0);
  expect(large.length).toBeGreaterThan(0);
  // what is left: the graph without those bytes, plus a location, offset and length (under 256 bytes) per weight
  expect(statSync(derived.path).size).toBeLessThan(statSync(source).size - embedded + 256 * large.length);
  for (const tensor of large) expect(tensor.externalData.find((entry) => entry.key === 'location')?.value).toBe(basename(source));
  expect(graph.graph!.initializer.every((tensor) => tensor.externalData.length > 0 || tensor.rawData.byteLength < IN_PLACE_MIN_BYTES)).toBe(true);
  for (const prepacked of [true, false]) {
    const expected = await trace(source, null, prepacked, ids, 3);
    const actual = await trace(derived.path, derived.externalDataFolder, prepacked, ids, 3);
    expect(actual.length).toBe(expected.length);
    actual.forEach((output, index) => expect(Buffer.compare(output, expected[index]!), `output ${index}, ${prepacked ? 'prepacked' : 'unpacked'}`).toBe(0));
  }
}

describe('ensureInPlaceModel: the source graph, its embedded weights read in place', () => {
  it('the synthetic model (91 MiB of weights inside its .onnx): every output bit for bit, prepacked and unpacked', async () => {
    const folder = await ensureSyntheticModel('synthetic', { cacheDir: testCacheDir() });
    await expectSameAsSource(join(folder, 'onnx', 'model.onnx'), [1, 300, 17, 400, 99, 12, 51, 7]);
  }, 120_000);

  const stories = hasShared() ? join(sharedDir(), 'models', 'stories260k', 'onnx') : '';
  it.runIf(stories !== '').each(['model.onnx', 'model_fp16.onnx'])('stories260k\'s %s (weights inside the .onnx): every output bit for bit, prepacked and unpacked', async (file) => {
    const source = join(stories, file);
    // stories260k keeps every weight inside its .onnx: no initializer names external data
    expect(decodeModel(readFileSync(source)).graph!.initializer.some((tensor) => tensor.externalData.length > 0)).toBe(false);
    await expectSameAsSource(source, [1, 403, 407, 261, 378, 432, 383, 286]);
  }, 120_000);
});
