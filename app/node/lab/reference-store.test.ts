import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lock } from 'proper-lockfile';
import type { WindowReference } from '../../lab/reference-source.js';
import { EvalCancelledError } from '../../lab/eval-cancelled.js';
import { ReferenceStore } from './reference-store.js';

const KEY = 'a'.repeat(64);
let dir: string;

/** Two windows of a 3-token vocabulary, `seed` in every logit so two computations can be told apart. */
function windows(seed: number): WindowReference[] {
  return [
    { logits: Float32Array.from([seed, 1, 2, 3, 4, 5]), vocab: 3 },
    { logits: Float32Array.from([seed, 6, 7]), vocab: 3 },
  ];
}

/** A computation that counts its calls and finishes when told. */
function slowCompute(seed: number): { compute: () => Promise<WindowReference[]>; calls: () => number; finish: () => void } {
  let calls = 0;
  let finish = (): void => undefined;
  const done = new Promise<void>((resolve) => { finish = resolve; });
  return { compute: async () => { calls++; await done; return windows(seed); }, calls: () => calls, finish };
}

beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'kvscope-reference-store-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('ReferenceStore.openOrCompute', () => {
  it('computes a reference once when two evaluations ask for it at the same time; the second reads the first one\'s file', async () => {
    const store = new ReferenceStore(dir);
    const first = slowCompute(11);
    const second = slowCompute(22);
    const a = store.openOrCompute(KEY, first.compute, { pollMs: 5 });
    const b = new ReferenceStore(dir).openOrCompute(KEY, second.compute, { pollMs: 5 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(store.path(KEY) + '.lock')).toBe(true);
    first.finish();
    const [ra, rb] = await Promise.all([a, b]);
    second.finish();
    expect(first.calls()).toBe(1);
    expect(second.calls()).toBe(0);
    expect(ra.cached).toBe(false);
    expect(rb.cached).toBe(true);
    expect(Array.from((await rb.reference.window(0)).logits)).toEqual([11, 1, 2, 3, 4, 5]);
    expect(Array.from((await rb.reference.window(1)).logits)).toEqual([11, 6, 7]);
    // The lock is gone, only the reference is left.
    expect(readdirSync(dir)).toEqual([`${KEY}.ref`]);
  });

  it('takes over a lock its holder left when it was killed (not refreshed for 30 s)', async () => {
    const store = new ReferenceStore(dir);
    const lockFolder = store.path(KEY) + '.lock';
    mkdirSync(lockFolder);
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(lockFolder, longAgo, longAgo);
    const { reference, cached } = await store.openOrCompute(KEY, async () => windows(33), { pollMs: 5 });
    expect(cached).toBe(false);
    expect(Array.from((await reference.window(1)).logits)).toEqual([33, 6, 7]);
  });

  it('stops waiting for another process\'s reference when the evaluation is cancelled', async () => {
    const store = new ReferenceStore(dir);
    const release = await lock(store.path(KEY), { realpath: false, stale: 30_000 });
    let cancelled = false;
    let computed = 0;
    const waiting = store.openOrCompute(KEY, async () => { computed++; return windows(44); }, { pollMs: 5, isCancelled: () => cancelled });
    await new Promise((resolve) => setTimeout(resolve, 30));
    cancelled = true;
    await expect(waiting).rejects.toBeInstanceOf(EvalCancelledError);
    expect(computed).toBe(0);
    await release();
  });

  it('a stored reference is read without taking the lock', async () => {
    const store = new ReferenceStore(dir);
    store.save(KEY, windows(55));
    const release = await lock(store.path(KEY), { realpath: false, stale: 30_000 });
    const { reference, cached } = await store.openOrCompute(KEY, async () => windows(66), { pollMs: 5 });
    expect(cached).toBe(true);
    expect((await reference.window(0)).logits[0]).toBe(55);
    await release();
  });
});
