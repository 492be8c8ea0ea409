import { closeSync, cpSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { hasShared } from '../golden.js';
import { ensureReferenceGraphs } from '../lab/reference-graphs.js';
import { storiesDir } from '../test-support/stories.js';
import { evictBeyondCap, listDerivedGraphs, removeDerivedGraph } from './derived-graph-cache.js';
import { ensureInPlaceModel, ensureLogitsRowsModel } from './in-graph-model.js';

/*
 * The one derived-graph cache (issue 23): every kind of graph derived from a user's graph (the
 * in-graph rewrite, the logits-rows cut, the eval reference's graph, the graph with its embedded
 * weights read in place) under one content key that includes the kind, one manifest, one
 * verify-on-open, one listing, one least-recently-used cap.
 */

const root = mkdtempSync(join(tmpdir(), 'kvscope-derived-graphs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const source = join(storiesDir(), 'onnx', 'model.onnx');

/** Flips two bytes in the middle of `path`, keeping its size. */
function flip(path: string): void {
  const at = Math.floor(statSync(path).size / 2);
  const fd = openSync(path, 'r+');
  try {
    const bytes = Buffer.alloc(2);
    readSync(fd, bytes, 0, 2, at);
    bytes[0]! ^= 0x5a;
    bytes[1]! ^= 0x5a;
    writeSync(fd, bytes, 0, 2, at);
  } finally {
    closeSync(fd);
  }
}

function manifest(folder: string): { kind: string; key: string; source: { path: string; sha256: string } } {
  return JSON.parse(readFileSync(join(folder, 'derived-graph.json'), 'utf8')) as ReturnType<typeof manifest>;
}

describe.skipIf(!hasShared())('the derived-graph cache on stories260k', () => {
  it('keys the kind of derivation: three kinds of one source, three entries, each listed with its kind and source', async () => {
    const cache = join(root, 'kinds');
    const inPlace = await ensureInPlaceModel(source, cache);
    const rows = await ensureLogitsRowsModel(source, cache);
    const reference = await ensureReferenceGraphs(source, 'logits', cache);
    if ('reason' in reference) throw new Error(reference.reason);
    const folders = [dirname(inPlace.path), dirname(rows.path), dirname(reference.modelPath)];
    expect(new Set(folders).size).toBe(3);
    expect(folders.map((folder) => manifest(folder).kind)).toEqual(['in-place', 'logits-rows', 'reference']);
    for (const folder of folders) expect(manifest(folder).source.path).toBe(source);
    const listed = listDerivedGraphs(cache).sort((a, b) => a.what.localeCompare(b.what));
    expect(listed.map((entry) => entry.what)).toEqual([
      `compact-reference graph (hidden-state outputs, LM head input) of ${source}`,
      `graph computing only the logits rows asked for (num_logits_to_keep added) of ${source}`,
      `the graph itself, its weights inside the .onnx read in place of ${source}`,
    ]);
    // graphs without their weights: each well under the source's 1.3 MB
    for (const entry of listed) expect(entry.bytes).toBeLessThan(statSync(source).size / 4);
  });

  it('verifies the reference graph on open: a flipped byte is discarded, rebuilt and said in one line', async () => {
    const cache = join(root, 'verify');
    const first = await ensureReferenceGraphs(source, 'logits', cache);
    if ('reason' in first) throw new Error(first.reason);
    const whole = readFileSync(first.modelPath);
    flip(first.modelPath);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const again = await ensureReferenceGraphs(source, 'logits', cache);
    const lines = stderr.mock.calls.map((call) => String(call[0])).join('');
    vi.restoreAllMocks();
    expect(again).toEqual(first);
    expect(lines).toMatch(/^kvscope: the cached derived graph \(compact-reference graph \(hidden-state outputs, LM head input\)\) in \S+ has a model\.onnx that does not match its sha256 \(damaged\); discarded and rebuilt\.\n$/);
    expect(Buffer.compare(readFileSync(first.modelPath), whole)).toBe(0);
    // whole again: the next open says nothing
    const quiet = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    await ensureReferenceGraphs(source, 'logits', cache);
    expect(quiet).not.toHaveBeenCalled();
  });

  it('an entry of another kind at a key is not taken for this one', async () => {
    const cache = join(root, 'foreign');
    const rows = await ensureLogitsRowsModel(source, cache);
    const inPlace = await ensureInPlaceModel(source, cache);
    // the logits-rows entry's files put where the in-place entry is: its manifest names another key and kind
    rmSync(dirname(inPlace.path), { recursive: true });
    cpSync(dirname(rows.path), dirname(inPlace.path), { recursive: true });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const rebuilt = await ensureInPlaceModel(source, cache);
    expect(String(stderr.mock.calls[0]?.[0])).toMatch(/has a derived-graph\.json for another key or format; discarded and rebuilt/);
    expect(rebuilt.builtMs).not.toBeNull();
    expect(manifest(dirname(rebuilt.path)).kind).toBe('in-place');
  });

  it('an open is a use (the listing\'s last use); the cap removes the least recently used, never one just used', async () => {
    const cache = join(root, 'lru');
    const inPlace = await ensureInPlaceModel(source, cache);
    const rows = await ensureLogitsRowsModel(source, cache);
    const longAgo = new Date(Date.now() - 30 * 86_400_000);
    const lastUse = (path: string) => listDerivedGraphs(cache).find((entry) => path.includes(entry.name))!.lastUsedMs;
    for (const path of [inPlace.path, rows.path]) utimesSync(join(dirname(path), 'derived-graph.json'), longAgo, longAgo);
    expect(lastUse(inPlace.path)).toBeLessThan(Date.now() - 29 * 86_400_000);
    await ensureInPlaceModel(source, cache);
    expect(lastUse(inPlace.path)).toBeGreaterThan(Date.now() - 60_000);
    // a cap below both: the one unused for 30 days goes, the one opened now stays
    evictBeyondCap(cache, 1, Date.now());
    expect(listDerivedGraphs(cache).map((entry) => entry.name)).toEqual([dirname(inPlace.path).split('/').at(-1)]);
    // a name that is not an entry of the folder removes nothing
    removeDerivedGraph(cache, '..');
    expect(statSync(cache).isDirectory()).toBe(true);
  });
});
