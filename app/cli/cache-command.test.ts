import { describe, expect, it } from 'vitest';
import { parseAge, pruneChoice, runCacheCommand, type CacheEntry, type CacheFolder } from './cache-command.js';
import { ExitCode, type CliIo } from './io.js';

const DAY = 86_400_000;
const NOW = 1_000 * DAY;
const entry = (name: string, bytes: number, daysAgo: number): CacheEntry => ({ name, what: `reference ${name}`, bytes, linkedBytes: 0, lastUsedMs: NOW - daysAgo * DAY });

describe('pruneChoice', () => {
  const entries = [entry('a', 100, 40), entry('b', 300, 10), entry('c', 200, 1), entry('d', 50, 60)];
  it('by age: those unused for longer than the age', () => {
    expect(pruneChoice(entries, NOW, 30 * DAY, null).map((e) => e.name)).toEqual(['d', 'a']);
  });
  it('by size: least recently used first until the rest fits', () => {
    expect(pruneChoice(entries, NOW, null, 500).map((e) => e.name)).toEqual(['d', 'a']);
    expect(pruneChoice(entries, NOW, null, 450).map((e) => e.name)).toEqual(['d', 'a', 'b']);
    expect(pruneChoice(entries, NOW, null, 650).map((e) => e.name)).toEqual([]);
    expect(pruneChoice(entries, NOW, null, 0).map((e) => e.name)).toEqual(['d', 'a', 'b', 'c']);
  });
  it('both: the age first, then the size on what is left', () => {
    expect(pruneChoice(entries, NOW, 30 * DAY, 300).map((e) => e.name)).toEqual(['d', 'a', 'b']);
  });
});

describe('parseAge', () => {
  it.each([['30d', 30 * DAY], ['12h', 12 * 3_600_000], ['90m', 90 * 60_000], ['2w', 14 * DAY], ['1.5d', 1.5 * DAY], ['d', null], ['-1d', null], ['30', null]] as const)(
    '%j', (text, ms) => expect(parseAge(text)).toBe(ms));
});

describe('runCacheCommand in memory', () => {
  function harness(extra: CacheFolder[] = []): { io: CliIo; out: () => string; removed: string[]; run: (args: string[], options?: Record<string, string | boolean>) => ExitCode } {
    let out = '';
    const removed: string[] = [];
    const io = { stdout: (text: string) => void (out += text), stderr: () => undefined } as unknown as CliIo;
    const folders: CacheFolder[] = [
      { name: 'eval-references', path: '/c/eval-references', managed: true, entries: [entry('k-old', 1024, 50), entry('k-new', 2048, 0)] },
      { name: 'in-graph', path: '/c/in-graph', managed: false, entries: [{ name: 'g1', what: 'in-graph rewrite', bytes: 4096, linkedBytes: 1 << 20, lastUsedMs: NOW }] },
      { name: 'models', path: '/c/models', managed: false, entries: [] },
      ...extra,
    ];
    const runtime = { root: '/c', maxBytes: 20 * 1024 ** 3, list: () => folders, remove: (folder: string, name: string) => void removed.push(folder === 'eval-references' ? name : `${folder}/${name}`), now: () => NOW };
    return { io, out: () => out, removed, run: (args, options = {}) => runCacheCommand(args, options, io, runtime) };
  }

  it('list names the folder, the cap, each entry with size and last use, and the hard-linked weights apart', () => {
    const h = harness();
    expect(h.run(['list'])).toBe(ExitCode.ok);
    expect(h.out()).toContain('kvscope cache: /c (KVSCOPE_CACHE_DIR moves it)');
    expect(h.out()).toContain('eval-references/  2 entries, 3.00 KiB  [capped at 20.0 GiB (KVSCOPE_CACHE_MAX_BYTES)');
    expect(h.out()).toMatch(/k-old {15}1\.00 KiB {3}50 d ago {2}reference k-old/);
    expect(h.out()).toContain('in-graph/  1 entry, 4.00 KiB (+ 1.00 MiB hard-linked to the models\' own files)  [listed only');
    expect(h.removed).toEqual([]);
  });

  it('prune removes only eval references, and --dry-run none', () => {
    const h = harness();
    h.run(['prune'], { 'max-size': '2K', 'dry-run': true });
    expect(h.removed).toEqual([]);
    expect(h.out()).toContain('would remove 1 eval reference (1.00 KiB); 2.00 KiB left in /c/eval-references');
    h.run(['prune'], { 'older-than': '30d', json: true });
    expect(h.removed).toEqual(['k-old']);
    expect(JSON.parse(h.out().split('\n').at(-2)!)).toEqual({ ok: true, dryRun: false, removed: ['k-old'], freedBytes: 1024, remainingBytes: 2048 });
  });

  const derived: CacheFolder = {
    name: 'derived-graphs', path: '/c/derived-graphs', managed: true, maxBytes: 1024 ** 3,
    entries: [entry('d-old', 512, 45), entry('d-new', 256, 2)].map((e) => ({ ...e, what: `in-graph dequantization rewrite of /m/model.onnx` })),
  };
  const stale: CacheFolder = {
    name: 'reference-graphs', path: '/c/reference-graphs', managed: true, stale: true,
    entries: [{ name: 'reference-graphs', what: 'compact-reference graphs of an older kvscope (2 entries), no longer read', bytes: 300, linkedBytes: 0, lastUsedMs: NOW }],
  };

  it('list shows the derived graphs with their own cap, and an older kvscope\'s folder as stale', () => {
    const h = harness([derived, stale]);
    h.run(['list']);
    expect(h.out()).toContain('derived-graphs/  2 entries, 768 B  [capped at 1.00 GiB, least recently used removed first; kvscope cache prune]');
    expect(h.out()).toContain('reference-graphs/  1 entry, 300 B  [from an older kvscope, no longer read: kvscope cache prune removes it]');
  });

  it('prune weighs eval references and derived graphs as one pool, and removes an older kvscope\'s folder whole', () => {
    const h = harness([derived, stale]);
    h.run(['prune'], { 'older-than': '30d' });
    expect(h.removed).toEqual(['reference-graphs/reference-graphs', 'k-old', 'derived-graphs/d-old']);
    expect(h.out()).toContain('kvscope cache: removed 1 eval reference (1.00 KiB); 2.00 KiB left in /c/eval-references');
    expect(h.out()).toContain('kvscope cache: removed 1 derived graph (512 B); 256 B left in /c/derived-graphs');
    expect(h.out()).toContain('kvscope cache: removed 1 entry of reference-graphs/ (from an older kvscope, no longer read) (300 B); 0 B left in /c/reference-graphs');
    const sized = harness([derived]);
    // 3.75 KiB in the pool: the least recently used (k-old, then d-old) go until 2.25 KiB is left
    sized.run(['prune'], { 'max-size': '2304', json: true });
    expect(JSON.parse(sized.out())).toEqual({ ok: true, dryRun: false, removed: ['k-old', 'derived-graphs/d-old'], freedBytes: 1536, remainingBytes: 2304 });
  });
});
