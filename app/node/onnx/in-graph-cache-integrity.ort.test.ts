import { chmodSync, cpSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, utimesSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import type { RunSettings } from '../../engine/types.js';
import { decodeModel } from '../../onnx/onnx-model.js';
import { hasShared } from '../golden.js';
import { releaseCachedSessions } from '../ort/session-cache.js';
import { runGeneration } from '../run-generation.js';
import { runPath, type PathRun } from '../test-support/path-run.js';
import { storiesDir, storiesSettings } from '../test-support/stories.js';
import { mountTestTmpfs, type TestTmpfs } from '../test-support/tmpfs.js';
import { writeModelWithExternalData } from './write-external-data.js';

/*
 * Issue 24 point 1 and issue 23 point 5 on real runs: the rewrite cache on a tmpfs (another file
 * system than the model's disk) holds the rewritten graph alone, and every entry damaged while its
 * size is kept is found, discarded, rebuilt with one line that does not blame the model, and gives
 * the fresh run's logits bit for bit.
 */
/** Mounted by beforeAll, so that a run that filters every test out mounts nothing (its afterAll would not run). */
let tmpfs: TestTmpfs | null = null;
const savedCacheDir = process.env['KVSCOPE_CACHE_DIR'];
let modelDir = '';

beforeAll(async () => {
  if (!hasShared()) return;
  tmpfs = mountTestTmpfs('64m');
  if (tmpfs.dir === null) {
    console.warn(`in-graph cache on two file systems skipped: ${tmpfs.skipReason}`);
    return;
  }
  modelDir = join(mkdtempSync(join(tmpdir(), 'kvscope-in-graph-src-')), 'stories260k');
  cpSync(storiesDir(), modelDir, { recursive: true });
  chmodSync(join(modelDir, 'onnx'), 0o755);
  // the same weights as external data beside the graph, as large exports ship them
  const model = decodeModel(readFileSync(join(modelDir, 'onnx', 'model.onnx')));
  await writeModelWithExternalData(model, join(modelDir, 'onnx', 'model_ext.onnx'), { location: () => 'model_ext.onnx_data' });
  process.env['KVSCOPE_CACHE_DIR'] = tmpfs.dir;
});

afterAll(async () => {
  await releaseCachedSessions();
  if (savedCacheDir === undefined) delete process.env['KVSCOPE_CACHE_DIR'];
  else process.env['KVSCOPE_CACHE_DIR'] = savedCacheDir;
  if (modelDir !== '') rmSync(join(modelDir, '..'), { recursive: true, force: true });
  if (tmpfs?.dir != null) tmpfs.unmount();
});

const settings = (onnxFile: string): RunSettings => storiesSettings({
  model: modelDir, onnxFile, cacheMode: 'quantized', prompt: 'Once upon a time', maxNewTokens: 40,
  quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32, residualLength: 16 },
});

function expectSameRun(actual: PathRun, expected: PathRun): void {
  expect(actual.ids).toEqual(expected.ids);
  const differing = actual.logits.flatMap((bits, step) => (Buffer.compare(bits, expected.logits[step]!) === 0 ? [] : [step]));
  expect(differing, 'steps whose logits differ in any bit').toEqual([]);
}

function cacheEntries(): string[] {
  const root = join(tmpfs!.dir!, 'derived-graphs');
  return readdirSync(root).filter((name) => !name.startsWith('.')).map((name) => join(root, name));
}

/** Flips `count` bytes at `offset` (negative: from the end) of `path`, keeping its size. */
function flipBytes(path: string, offset: number, count = 4): void {
  const size = statSync(path).size;
  const at = offset < 0 ? size + offset : offset;
  const fd = openSync(path, 'r+');
  try {
    const bytes = Buffer.alloc(count);
    readSync(fd, bytes, 0, count, at);
    for (let i = 0; i < count; i++) bytes[i]! ^= 0x5a;
    writeSync(fd, bytes, 0, count, at);
  } finally {
    closeSync(fd);
  }
  expect(statSync(path).size).toBe(size);
}

/** Runs the graph path, returning the run and the lines kvscope wrote to stderr meanwhile. */
async function graphRun(onnxFile: string): Promise<{ run: PathRun; stderr: string }> {
  const spy = vi.spyOn(process.stderr, 'write');
  try {
    const run = await runPath(settings(onnxFile), 'graph');
    return { run, stderr: spy.mock.calls.map((call) => String(call[0])).join('') };
  } finally {
    spy.mockRestore();
  }
}

describe.skipIf(!hasShared())('the rewrite cache on another file system (tmpfs) than the model', () => {
  for (const onnxFile of ['onnx/model.onnx', 'onnx/model_ext.onnx']) {
    it(`${onnxFile}: no weight bytes in the cache, bit-identical to the host path; each damaged part rebuilt with one line`, async (context) => {
      if (tmpfs?.dir == null) context.skip();
      expect(statSync(tmpfs!.dir!).dev, 'the cache and the model are on two file systems').not.toBe(statSync(modelDir).dev);
      rmSync(join(tmpfs!.dir!, 'derived-graphs'), { recursive: true, force: true });
      const host = await runPath(settings(onnxFile), 'host');
      const fresh = await graphRun(onnxFile);
      expect(fresh.stderr).toBe('');
      expectSameRun(fresh.run, host);

      const [entry, ...others] = cacheEntries();
      expect(others).toEqual([]);
      expect(readdirSync(entry!).sort()).toEqual(['derived-graph.json', 'model.onnx']);
      const rewritten = decodeModel(readFileSync(join(entry!, 'model.onnx')));
      const embedded = (rewritten.graph?.initializer ?? []).filter((tensor) => tensor.rawData.byteLength >= 1024).map((tensor) => tensor.name);
      expect(embedded, 'initializers whose bytes were copied into the cache').toEqual([]);
      // what stays inside: the rewrite's own constants and the source's small ones (shapes, axes), a few KB
      const embeddedBytes = (rewritten.graph?.initializer ?? []).reduce((sum, tensor) => sum + tensor.rawData.byteLength, 0);
      expect(embeddedBytes).toBeLessThan(16 * 1024);
      // the graph's nodes alone are ~150 KB of stories260k's 1.3 MB; the 1.17 MB of weights are not in the cache
      const cacheBytes = readdirSync(entry!).reduce((sum, name) => sum + statSync(join(entry!, name)).size, 0);
      expect(cacheBytes).toBeLessThan(statSync(join(modelDir, 'onnx', 'model.onnx')).size / 4);

      const again = await graphRun(onnxFile);
      expect(again.stderr).toBe('');
      expectSameRun(again.run, host);

      const damages: [string, () => void][] = [
        ['graph bytes flipped', () => flipBytes(join(entry!, 'model.onnx'), Math.floor(statSync(join(entry!, 'model.onnx')).size / 2))],
        ['manifest bytes flipped', () => flipBytes(join(entry!, 'derived-graph.json'), readFileSync(join(entry!, 'derived-graph.json'), 'utf8').indexOf('"sha256": "', readFileSync(join(entry!, 'derived-graph.json'), 'utf8').indexOf('"model"')) + 20, 2)],
        ['manifest made unreadable', () => flipBytes(join(entry!, 'derived-graph.json'), 0, 1)],
      ];
      if (onnxFile.endsWith('_ext.onnx')) {
        // the source's data file replaced by another of the same size (here: the same bytes, a new modification time)
        damages.push(['source data file replaced', () => utimesSync(join(modelDir, 'onnx', 'model_ext.onnx_data'), new Date(), new Date(Date.now() - 3_600_000))]);
      }
      for (const [what, damage] of damages) {
        damage();
        const repaired = await graphRun(onnxFile);
        expect(repaired.stderr, what).toMatch(/^kvscope: the cached derived graph \(in-graph dequantization rewrite\) in \S+ (has|was) .+; discarded and rebuilt\.\n$/);
        expect(repaired.stderr, what).not.toMatch(/Download|\bagain\b|\.onnx file/);
        expectSameRun(repaired.run, host);
        expect(cacheEntries(), what).toEqual([entry]);
      }
      // a run's record keeps the line as a diagnostic; the run's own entry is the rewrite with the
      // logits-rows cut composed in (stories260k has no num_logits_to_keep), built by a first run
      const spy = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
      try {
        await runGeneration({ ...settings(onnxFile), dequantize: 'graph', maxNewTokens: 4 });
        const runEntries = cacheEntries().filter((path) => path !== entry);
        expect(runEntries).toHaveLength(1);
        flipBytes(join(runEntries[0]!, 'model.onnx'), 100);
        const result = await runGeneration({ ...settings(onnxFile), dequantize: 'graph', maxNewTokens: 4 });
        const notice = result.diagnostics.find((d) => d.code === 'cache-entry-rebuilt');
        expect(notice?.message).toMatch(/cached derived graph .* does not match its sha256 \(damaged\); it was discarded and rebuilt \(the model itself was not at fault\)/);
        expect(result.generatedTokenIds).toEqual(host.ids.slice(0, 4));
      } finally {
        spy.mockRestore();
      }
    }, 120_000);
  }
});
