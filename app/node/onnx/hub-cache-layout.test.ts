import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeModel } from '../../onnx/onnx-model.js';
import { hasShared } from '../golden.js';
import { runEval } from '../lab/run-eval.js';
import { storiesEvalSettings, tempReferenceStore } from '../lab/test-support/eval-settings.js';
import { releaseCachedSessions } from '../ort/session-cache.js';
import { ensureSyntheticModel } from '../synthetic/ensure-synthetic-model.js';
import { testCacheDir } from '../synthetic/test-support/synthetic-session.js';
import { HQQ8, storiesDir } from '../test-support/stories.js';
import { sha256File } from '../model/file-digest.js';
import { ensureInPlaceModel, ensureLogitsRowsModel } from './in-graph-model.js';
import { writeModelWithExternalData } from './write-external-data.js';

/*
 * A model folder as the Hugging Face hub cache keeps it: `snapshots/<rev>/…` holds symbolic links into
 * `blobs/<sha256>`. onnxruntime refuses external data whose real path leaves the folder it reads from,
 * so a derived graph reads the source's weights from the folder the links lead to, each file by its
 * name there (derived-graph-cache.ts weightsLayout): the same figures as a plain copy of the folder.
 */

const root = mkdtempSync(join(tmpdir(), 'kvscope-hub-layout-'));
afterAll(async () => {
  await releaseCachedSessions();
  rmSync(root, { recursive: true, force: true });
});

/** `folder` laid out as the hub cache does: every file moved to blobs/<sha256>, a link to it in its place. */
async function asHubCache(folder: string, name: string): Promise<string> {
  const blobs = join(root, name, 'blobs');
  const snapshot = join(root, name, 'snapshots', 'rev');
  mkdirSync(blobs, { recursive: true });
  cpSync(folder, snapshot, { recursive: true });
  const walk = async (dir: string): Promise<void> => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        await walk(path);
        continue;
      }
      const blob = join(blobs, await sha256File(path));
      renameSync(path, blob);
      symlinkSync(blob, path);
    }
  };
  await walk(snapshot);
  return snapshot;
}

async function logits(path: string, externalDataFolder: string): Promise<Buffer> {
  const session = await ort.InferenceSession.create(path, { extra: { session: { model_external_initializers_file_folder_path: externalDataFolder } } });
  try {
    const n = 5;
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from({ length: n }, (_, i) => BigInt(3 + 7 * i)), [1, n]),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(n).fill(1n), [1, n]),
      position_ids: new ort.Tensor('int64', BigInt64Array.from({ length: n }, (_, i) => BigInt(i)), [1, n]),
    };
    for (const input of session.inputMetadata) {
      if (input.name === 'num_logits_to_keep') feeds[input.name] = new ort.Tensor('int64', BigInt64Array.of(BigInt(n)), []);
      if (!input.isTensor || !input.name.startsWith('past_key_values.')) continue;
      const [, heads, , headDim] = input.shape as [unknown, number, unknown, number];
      feeds[input.name] = new ort.Tensor('float32', new Float32Array(0), [1, heads, 0, headDim]);
    }
    const data = (await session.run(feeds, ['logits']))['logits']!.data as Float32Array;
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  } finally {
    await session.release();
  }
}

describe('derived graphs of a model in the Hugging Face hub cache layout (symbolic links into blobs/)', () => {
  it('weights in external data files: the logits-rows and in-place graphs read them through the links\' targets, the same logits', async () => {
    const synthetic = await ensureSyntheticModel('synthetic', { cacheDir: testCacheDir() });
    const plain = join(root, 'plain');
    mkdirSync(join(plain, 'onnx'), { recursive: true });
    await writeModelWithExternalData(decodeModel(readFileSync(join(synthetic, 'onnx', 'model.onnx'))), join(plain, 'onnx', 'model.onnx'), { location: () => 'model.onnx_data' });
    const hub = await asHubCache(plain, 'synthetic');
    const cache = join(root, 'derived');
    for (const ensure of [ensureInPlaceModel, ensureLogitsRowsModel]) {
      const fromPlain = await ensure(join(plain, 'onnx', 'model.onnx'), cache);
      const fromHub = await ensure(join(hub, 'onnx', 'model.onnx'), cache);
      expect(fromHub.externalDataFolder).toBe(join(root, 'synthetic', 'blobs'));
      expect(fromHub.key).not.toBe(fromPlain.key);
      expect(Buffer.compare(await logits(fromHub.path, fromHub.externalDataFolder), await logits(fromPlain.path, fromPlain.externalDataFolder))).toBe(0);
    }
  }, 120_000);

  it.runIf(hasShared())('stories260k (weights inside the .onnx): eval on the graph path gives the plain folder\'s figures', async () => {
    const hub = await asHubCache(storiesDir(), 'stories');
    const settings = storiesEvalSettings({ cacheMode: 'quantized', quantization: HQQ8, dequantize: 'graph' }, 1);
    const stores = [tempReferenceStore(), tempReferenceStore()];
    try {
      const plain = await runEval(settings, { referenceStore: stores[0]!.store, perToken: true });
      const linked = await runEval({ ...settings, model: hub }, { referenceStore: stores[1]!.store, perToken: true });
      expect(linked.dequantize).toBe('graph');
      expect(linked.summary).toEqual(plain.summary);
      expect(linked.perToken).toEqual(plain.perToken);
    } finally {
      for (const store of stores) store.remove();
    }
  }, 120_000);
});
