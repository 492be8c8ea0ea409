import { TensorProto_DataLocation } from 'onnx-buf';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import { planInGraph, unpackStrategyFor } from '../../engine/in-graph-run.js';
import { planRunCache } from '../../engine/plan-run-cache.js';
import { decodeModel } from '../../onnx/onnx-model.js';
import { hasShared } from '../golden.js';
import { readModelFiles } from '../model/open-model.js';
import { storiesDir, storiesSettings } from '../test-support/stories.js';
import { ensureInGraphModel, ensureLogitsRowsModel } from './in-graph-model.js';

const root = mkdtempSync(join(tmpdir(), 'kvscope-logits-rows-cache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const inputNames = (path: string): string[] => decodeModel(readFileSync(path)).graph!.input.map((input) => input.name);

/**
 * The last-rows graph a run derives for a model without num_logits_to_keep lives in the in-graph
 * rewrite cache and is kept exactly as the rewrite is (STYLE.md §15, issue 23): content-addressed,
 * verified by sha256 before use, its weights read from the source in place; on the graph-dequantize
 * path it is composed into the rewritten graph, one derived graph.
 */
describe.skipIf(!hasShared())('the logits-rows graph in the rewritten-graph cache (stories260k)', () => {
  it('is built once, holds no weight bytes, and a damaged entry is rebuilt and said so', async () => {
    const cache = join(root, 'cache-a');
    const files = await readModelFiles(storiesDir());
    const first = await ensureLogitsRowsModel(files.onnxPath, cache);
    expect(first.builtMs).not.toBeNull();
    expect(first.externalDataFolder).toBe(dirname(files.onnxPath));
    expect(inputNames(first.path)).toContain('num_logits_to_keep');
    expect(readdirSync(dirname(first.path)).sort()).toEqual(['derived-graph.json', 'model.onnx']);
    // every weight of 1 KiB or more is read from the source .onnx at its offset, none copied
    const model = decodeModel(readFileSync(first.path));
    const large = model.graph!.initializer.filter((tensor) => tensor.dims.reduce((a, b) => a * Number(b), 4) >= 1024);
    expect(large.length).toBeGreaterThan(0);
    for (const tensor of large) {
      expect(tensor.dataLocation, tensor.name).toBe(TensorProto_DataLocation.EXTERNAL);
      expect(tensor.externalData.find((entry) => entry.key === 'location')?.value).toBe('model.onnx');
    }
    expect(statSync(first.path).size).toBeLessThan(statSync(files.onnxPath).size / 4);

    const again = await ensureLogitsRowsModel(files.onnxPath, cache);
    expect(again).toMatchObject({ path: first.path, key: first.key, builtMs: null, rebuiltBecause: null });

    truncateSync(first.path, 10);
    const rebuilt = await ensureLogitsRowsModel(files.onnxPath, cache);
    expect(rebuilt.builtMs).not.toBeNull();
    expect(rebuilt.rebuiltBecause).toContain('of the wrong size');
    expect(inputNames(rebuilt.path)).toContain('num_logits_to_keep');
  });

  it('composes into the in-graph rewrite: one graph taking the stored cache parts and num_logits_to_keep, under a key of its own', async () => {
    const cache = join(root, 'cache-b');
    const files = await readModelFiles(storiesDir());
    const quantization = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32, residualLength: 16 };
    const { plan } = planRunCache(files.config, storiesSettings({ cacheMode: 'quantized', quantization }), 8);
    const planned = planInGraph(files.analysis.io!, files.config.geometry, plan!, quantization, unpackStrategyFor('cpu'));
    if (!planned.ok) throw new Error(planned.reason);
    const plain = await ensureInGraphModel(files.onnxPath, planned.spec, cache);
    const composed = await ensureInGraphModel(files.onnxPath, planned.spec, cache, { logitsRows: 'logits' });
    expect(plain.logitsRows).toBe(false);
    expect(composed.logitsRows).toBe(true);
    expect(composed.key).not.toBe(plain.key);
    expect(composed.io).toEqual(plain.io);
    expect(inputNames(plain.path)).not.toContain('num_logits_to_keep');
    const inputs = inputNames(composed.path);
    expect(inputs).toContain('num_logits_to_keep');
    expect(inputs.some((name) => name.endsWith('.codes'))).toBe(true);
    expect(readdirSync(cache).filter((entry) => !entry.startsWith('.'))).toHaveLength(2);
  });
});
