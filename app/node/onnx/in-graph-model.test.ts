import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeModel, encodeModel } from '../../onnx/onnx-model.js';
import type { InGraphSideSpec } from '../../onnx/rewrite/in-graph-spec.js';
import { toyAttentionModel, toySpec } from '../../onnx/rewrite/test-support/toy-attention.js';
import { ensureInGraphModel } from './in-graph-model.js';

const root = mkdtempSync(join(tmpdir(), 'kvscope-in-graph-cache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const QUANTO: InGraphSideSpec = { backend: 'quanto', nbits: 4, axis: 0, groupSize: 32, kvHeads: 2, headDim: 16 };

function sourceFile(name: string, layers = 2): string {
  const path = join(root, name);
  writeFileSync(path, encodeModel(toyAttentionModel(layers, 2, 16)));
  return path;
}

describe('the rewritten-graph cache (content-addressed, STYLE.md §15)', () => {
  it('builds once per source and spec; later calls take the cached file', async () => {
    const cache = join(root, 'cache-a');
    const source = sourceFile('a.onnx');
    const first = await ensureInGraphModel(source, toySpec(2, QUANTO, QUANTO), cache);
    expect(first.builtMs).not.toBeNull();
    const again = await ensureInGraphModel(source, toySpec(2, QUANTO, QUANTO), cache);
    expect(again).toMatchObject({ path: first.path, key: first.key, builtMs: null });
    expect(again.io).toEqual(first.io);
    // the file is the rewrite: the stored parts in, the new rows out
    const model = decodeModel(readFileSync(first.path));
    expect(model.graph!.input.map((input) => input.name)).toContain('past_key_values.0.key.codes');
    // another spec (HQQ values) or another source gets a folder of its own
    const hqq = await ensureInGraphModel(source, toySpec(2, QUANTO, { ...QUANTO, backend: 'hqq', axis: 1 }), cache);
    expect(hqq.key).not.toBe(first.key);
    const other = await ensureInGraphModel(sourceFile('b.onnx', 3), toySpec(3, QUANTO, QUANTO), cache);
    expect(other.key).not.toBe(first.key);
    expect(readdirSync(cache).filter((entry) => !entry.startsWith('.'))).toHaveLength(3);
  });

  it('concurrent callers share one build, and a folder altered by hand is rebuilt', async () => {
    const cache = join(root, 'cache-b');
    const source = sourceFile('c.onnx');
    const [one, two] = await Promise.all([ensureInGraphModel(source, toySpec(2, QUANTO, QUANTO), cache), ensureInGraphModel(source, toySpec(2, QUANTO, QUANTO), cache)]);
    expect(one.path).toBe(two.path);
    truncateSync(one.path, 10);
    const rebuilt = await ensureInGraphModel(source, toySpec(2, QUANTO, QUANTO), cache);
    expect(rebuilt.builtMs).not.toBeNull();
    expect(decodeModel(readFileSync(rebuilt.path)).graph!.node.length).toBeGreaterThan(0);
  });
});
