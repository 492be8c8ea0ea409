import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeModel, encodeModel } from '../onnx/onnx-model.js';
import { keepLogitsRows } from '../onnx/rewrite/logits-rows.js';
import { hasShared } from './golden.js';
import { readModelFiles } from './model/open-model.js';
import { releaseCachedSessions } from './ort/session-cache.js';
import { runGeneration } from './run-generation.js';
import { copyOfStories, LLAMA2C_EXPECTED_200, storiesSettings } from './test-support/stories.js';

/*
 * `kvscope run` on a graph that takes num_logits_to_keep and keeps its weights inside its .onnx (many
 * onnx-community exports): it runs the same graph with the weights read in place (ensureInPlaceModel),
 * as a prepacked session of the .onnx itself holds them twice (its parsed copy and the packed one).
 */
const previousCache = process.env['KVSCOPE_CACHE_DIR'];
let cacheRoot: string;
let copy: ReturnType<typeof copyOfStories>;
beforeAll(() => {
  cacheRoot = mkdtempSync(join(tmpdir(), 'kvscope-in-place-run-'));
  process.env['KVSCOPE_CACHE_DIR'] = cacheRoot;
  if (!hasShared()) return;
  copy = copyOfStories();
  // stories260k cut to take num_logits_to_keep itself: the folder's graph is what a run runs
  const graph = join(copy.dir, 'onnx', 'model.onnx');
  writeFileSync(graph, encodeModel(keepLogitsRows(decodeModel(readFileSync(graph)))));
});
afterAll(async () => {
  await releaseCachedSessions();
  copy?.remove();
  if (previousCache === undefined) delete process.env['KVSCOPE_CACHE_DIR'];
  else process.env['KVSCOPE_CACHE_DIR'] = previousCache;
  rmSync(cacheRoot, { recursive: true, force: true });
});

function kinds(): string[] {
  const dir = join(cacheRoot, 'derived-graphs');
  return readdirSync(dir).filter((name) => !name.startsWith('.'))
    .map((name) => (JSON.parse(readFileSync(join(dir, name, 'derived-graph.json'), 'utf8')) as { kind: string }).kind);
}

describe.skipIf(!hasShared())('kvscope run on a graph whose weights are inside its .onnx', () => {
  it('runs the in-place graph: llama2.c\'s 200 tokens, the graph derived once', async () => {
    const files = await readModelFiles(copy.dir);
    expect(files.analysis.logitsRows.kind).toBe('input');
    expect(files.analysis.embeddedWeightsBytes).toBeGreaterThan(1_000_000);
    const first = await runGeneration(storiesSettings({ model: copy.dir, maxNewTokens: 200 }));
    expect(first.text).toBe(LLAMA2C_EXPECTED_200);
    expect(kinds()).toEqual(['in-place']);
    expect(first.timings.rewriteMs).toBeGreaterThan(0);
    const again = await runGeneration(storiesSettings({ model: copy.dir, maxNewTokens: 200 }));
    expect(again.text).toBe(LLAMA2C_EXPECTED_200);
    expect(again.timings).not.toHaveProperty('rewriteMs');
  }, 120_000);
});
