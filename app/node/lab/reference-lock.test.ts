import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lock } from 'proper-lockfile';
import type { WindowReference } from '../../lab/reference-source.js';
import { EvalCancelledError } from '../../lab/eval-cancelled.js';
import { withReferenceLock } from './reference-lock.js';
import { ReferenceStore } from './reference-store.js';

const KEY = 'a'.repeat(64);
let dir: string;

/** Two windows of a 3-token vocabulary, `seed` first so two computations can be told apart. */
function windows(seed: number): WindowReference[] {
  return [{ logits: Float32Array.from([seed, 1, 2, 3, 4, 5]), vocab: 3 }, { logits: Float32Array.from([seed, 6, 7]), vocab: 3 }];
}

const DESCRIPTION = {
  model: { folder: '/models/m', onnxFile: 'model.onnx' }, text: { name: 't', sha256: 'b'.repeat(64) },
  windows: { context: 4, stride: 4, prefill: 1 }, feed: 'chunked', executionProvider: 'cpu',
};

/** run-eval's use: the stored windows, else computed and written under the entry's lock. */
async function openOrCompute(store: ReferenceStore, compute: () => Promise<WindowReference[]>): Promise<{ first: number; computed: boolean }> {
  let computed = false;
  const entry = store.entry(KEY, DESCRIPTION);
  if (!entry.has(0)) {
    await withReferenceLock(entry.folder, async () => {
      if (entry.has(0)) return;
      computed = true;
      for (const [index, window] of (await compute()).entries()) entry.write(index, { kind: 'logits', window });
    }, { pollMs: 5 });
  }
  const read = entry.read(0, 2);
  if (!read.ok || read.stored.kind !== 'logits') throw new Error('window 1 was not stored');
  return { first: read.stored.window.logits[0]!, computed };
}

beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'kvscope-reference-lock-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('withReferenceLock', () => {
  it('two evaluations that ask at once compute the reference once; the second reads the first one\'s file', async () => {
    let calls = 0;
    let finish = (): void => undefined;
    const gate = new Promise<void>((resolve) => { finish = resolve; });
    const slow = async (seed: number): Promise<WindowReference[]> => { calls++; await gate; return windows(seed); };
    const a = openOrCompute(new ReferenceStore(dir), () => slow(11));
    const b = openOrCompute(new ReferenceStore(dir), () => slow(22));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(join(dir, `${KEY}.lock`))).toBe(true);
    finish();
    const [ra, rb] = await Promise.all([a, b]);
    expect(calls).toBe(1);
    expect(ra).toEqual({ first: 11, computed: true });
    expect(rb).toEqual({ first: 11, computed: false });
    // The lock is gone; only the reference is left.
    expect(readdirSync(dir)).toEqual([KEY]);
  });

  it('takes over a lock that its holder stopped refreshing 30 s ago (a killed process)', async () => {
    const lockFolder = join(dir, `${KEY}.lock`);
    mkdirSync(lockFolder);
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(lockFolder, longAgo, longAgo);
    expect(await openOrCompute(new ReferenceStore(dir), async () => windows(33))).toEqual({ first: 33, computed: true });
  });

  it('stops waiting for another process\'s reference when the evaluation is cancelled', async () => {
    const path = join(dir, KEY);
    const release = await lock(path, { realpath: false, stale: 30_000 });
    let cancelled = false;
    let ran = false;
    const waiting = withReferenceLock(path, async () => { ran = true; }, { pollMs: 5, isCancelled: () => cancelled });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(ran).toBe(false);
    cancelled = true;
    await expect(waiting).rejects.toBeInstanceOf(EvalCancelledError);
    expect(ran).toBe(false);
    await release();
  });

  it('releases the lock when the work fails, so the next one can compute', async () => {
    const path = join(dir, KEY);
    await expect(withReferenceLock(path, async () => { throw new Error('the model failed'); })).rejects.toThrow('the model failed');
    expect(existsSync(`${path}.lock`)).toBe(false);
    expect(await withReferenceLock(path, async () => 'second')).toBe('second');
  });
});
