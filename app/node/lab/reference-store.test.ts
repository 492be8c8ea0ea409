import { closeSync, copyFileSync, existsSync, ftruncateSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredWindow } from './reference-window-file.js';
import { parseByteSize } from '../../cli/byte-size.js';
import { cacheMaxBytes, DEFAULT_CACHE_MAX_BYTES, referenceCacheDir } from './lab-cache-dir.js';
import { listReferenceEntries } from './reference-entries.js';
import { ReferenceStore, type ReferenceDescription } from './reference-store.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kvscope-refstore-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const description: ReferenceDescription = {
  model: { folder: '/models/tiny', onnxFile: 'onnx/model.onnx' }, text: { name: 'kvscope:default', sha256: 'ab' },
  windows: { context: 8, stride: 8, prefill: 4 }, feed: 'chunked', executionProvider: 'cpu',
};

/** `[rows, vocab]` logits with distinct values (a seed per window), NaN-free. */
function window(rows: number, vocab: number, seed: number): StoredWindow & { kind: 'logits' } {
  return { kind: 'logits', window: { logits: Float32Array.from({ length: rows * vocab }, (_, i) => Math.sin(seed * 1000 + i) * 7), vocab } };
}

/** Overwrites `bytes` at `offset` from the end of the file: its size stays the same. */
function overwriteNearEnd(path: string, fromEnd: number, bytes: Uint8Array): void {
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, statSync(path).size - fromEnd);
  } finally {
    closeSync(fd);
  }
}

describe('ReferenceStore: one entry per key, one verified file per window', () => {
  it('reads back the very floats written, window by window, in any order and any subset', () => {
    const store = new ReferenceStore(tempDir());
    const entry = store.entry('k1', description);
    expect(entry.has(0)).toBe(false);
    const written = [window(3, 50, 1), window(3, 50, 2), window(3, 50, 3)];
    entry.write(2, written[2]!);
    entry.write(0, written[0]!);
    expect([entry.has(0), entry.has(1), entry.has(2)]).toEqual([true, false, true]);
    const again = store.entry('k1', description);
    for (const index of [2, 0]) {
      const read = again.read(index, 3);
      expect(read.ok).toBe(true);
      if (read.ok && read.stored.kind === 'logits') {
        expect(read.stored.window.vocab).toBe(50);
        const logits = read.stored.window.logits;
        expect(Buffer.from(logits.buffer, logits.byteOffset, logits.byteLength)).toEqual(Buffer.from(written[index]!.window.logits.buffer));
      } else {
        expect.unreachable('a logits window');
      }
    }
    // Two windows of 3 × 50 float32, plus their headers and the description.
    expect(again.bytes()).toBeGreaterThan(2 * 3 * 50 * 4);
    expect(again.bytes()).toBeLessThan(2 * 3 * 50 * 4 + 4096);
  });

  it.each([
    ['changed floats, same size', new Uint8Array(Float32Array.of(1.5, -2.25).buffer)],
    ['NaNs, same size', new Uint8Array(Float32Array.of(Number.NaN, Number.NaN).buffer)],
  ])('refuses a window with %s (sha256), and removes it so it is computed again', (_name, bytes) => {
    const store = new ReferenceStore(tempDir());
    const entry = store.entry('k1', description);
    entry.write(0, window(4, 64, 1));
    const path = entry.windowPath(0);
    const size = statSync(path).size;
    overwriteNearEnd(path, 40, bytes);
    expect(statSync(path).size).toBe(size);
    const read = entry.read(0, 4);
    expect(read).toEqual({ ok: false, reason: 'its content does not match its sha256 (the file was changed or damaged)' });
    expect(entry.has(0)).toBe(false);
  });

  it('refuses a window of another shape, another key or index, or cut short', () => {
    const store = new ReferenceStore(tempDir());
    const entry = store.entry('k1', description);
    entry.write(0, window(4, 64, 1));
    expect(entry.read(0, 5)).toEqual({ ok: false, reason: 'it holds 4 rows, not the 5 this window scores' });
    entry.write(0, window(4, 64, 1));
    const other = store.entry('k2', description);
    other.write(1, window(4, 64, 1));
    // A file copied under another key's or index's name is not taken for it.
    const moved = store.entry('k1', description);
    rmSync(moved.windowPath(1), { force: true });
    copyFileSync(other.windowPath(1), moved.windowPath(1));
    expect(moved.read(1, 4)).toEqual({ ok: false, reason: 'it belongs to another reference' });
    copyFileSync(entry.windowPath(0), moved.windowPath(1));
    expect(moved.read(1, 4)).toEqual({ ok: false, reason: 'it belongs to another reference' });
    const fd = openSync(entry.windowPath(0), 'r+');
    try {
      ftruncateSync(fd, Math.floor(statSync(entry.windowPath(0)).size / 2));
    } finally {
      closeSync(fd);
    }
    expect(entry.read(0, 4)).toEqual({ ok: false, reason: 'its size does not match its header' });
    expect(entry.read(3, 4)).toEqual({ ok: false, reason: 'missing' });
  });

  it('keeps the folder under its cap by removing the least recently used entries, never the one being written', () => {
    const dir = tempDir();
    const oneWindow = 10 * 100 * 4;
    // Room for about two entries of one window each.
    const store = new ReferenceStore(dir, { maxBytes: 2 * oneWindow + 3000 });
    store.entry('old', description).write(0, window(10, 100, 1));
    store.entry('mid', description).write(0, window(10, 100, 2));
    const past = (seconds: number): Date => new Date(Date.now() - seconds * 1000);
    utimesSync(join(dir, 'old', 'reference.json'), past(300), past(300));
    utimesSync(join(dir, 'mid', 'reference.json'), past(200), past(200));
    // Opening 'old' is a use: 'mid' is now the least recently used.
    store.entry('old', description);
    store.entry('new', description).write(0, window(10, 100, 3));
    expect(readdirSync(dir).sort()).toEqual(['new', 'old']);
    // An entry larger than the cap on its own is kept while it is written (the evaluation needs it).
    const tiny = new ReferenceStore(dir, { maxBytes: 10 });
    const big = tiny.entry('big', description);
    big.write(0, window(10, 100, 4));
    big.write(1, window(10, 100, 5));
    expect(readdirSync(dir)).toEqual(['big']);
    expect(big.has(0) && big.has(1)).toBe(true);
  });

  it('lists entries with what they are of, their windows, size and last use', () => {
    const dir = tempDir();
    const store = new ReferenceStore(dir);
    const entry = store.entry('k1', description);
    entry.write(0, window(2, 10, 1));
    entry.write(1, window(2, 10, 2));
    const [listed, ...rest] = listReferenceEntries(dir);
    expect(rest).toEqual([]);
    expect(listed!.key).toBe('k1');
    expect(listed!.windows).toBe(2);
    expect(listed!.bytes).toBe(entry.bytes());
    expect(listed!.description?.model).toEqual(description.model);
    expect(Math.abs(listed!.lastUsedMs - Date.now())).toBeLessThan(60_000);
    expect(listReferenceEntries(join(dir, 'absent'))).toEqual([]);
    expect(existsSync(join(dir, 'k1', 'reference.json'))).toBe(true);
  });
});

describe('the cache folder and its cap', () => {
  it('KVSCOPE_CACHE_DIR moves the references; KVSCOPE_CACHE_MAX_BYTES sets the cap', () => {
    const saved = { dir: process.env['KVSCOPE_CACHE_DIR'], max: process.env['KVSCOPE_CACHE_MAX_BYTES'] };
    try {
      process.env['KVSCOPE_CACHE_DIR'] = '/tmp/somewhere';
      expect(referenceCacheDir()).toBe(join('/tmp/somewhere', 'eval-references'));
      delete process.env['KVSCOPE_CACHE_MAX_BYTES'];
      expect(cacheMaxBytes()).toBe(DEFAULT_CACHE_MAX_BYTES);
      process.env['KVSCOPE_CACHE_MAX_BYTES'] = '10G';
      expect(cacheMaxBytes()).toBe(10 * 1024 ** 3);
      process.env['KVSCOPE_CACHE_MAX_BYTES'] = 'lots';
      expect(() => cacheMaxBytes()).toThrow(/KVSCOPE_CACHE_MAX_BYTES="lots" is not a size/);
    } finally {
      for (const [name, value] of [['KVSCOPE_CACHE_DIR', saved.dir], ['KVSCOPE_CACHE_MAX_BYTES', saved.max]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it.each([['1048576', 1048576], ['512K', 512 * 1024], ['1.5G', 1.5 * 1024 ** 3], ['2TiB', 2 * 1024 ** 4], ['20 GB', 20 * 1024 ** 3], ['-1', null], ['1e9', null], ['', null]] as const)(
    'parseByteSize(%j) = %j', (text, bytes) => {
      expect(parseByteSize(text)).toBe(bytes);
    });
});
