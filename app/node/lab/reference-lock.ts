import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { lock } from 'proper-lockfile';
import { EvalCancelledError } from '../../lab/eval-cancelled.js';

/** A lock whose holder stopped refreshing it for this long was left by a killed process: taken over. */
export const REFERENCE_LOCK_STALE_MS = 30_000;

/**
 * Runs `work` (look for the reference, compute and store it when missing) while holding
 * `<path>.lock`, so that a reference is computed once per cache folder: shards of one sweep started
 * together (a Slurm array on one node, GNU parallel) would otherwise each compute it. The lock is
 * proper-lockfile's: a folder made atomically (also on NFS) whose mtime the holder refreshes, so the
 * lock of a killed process goes stale and is taken over. Those who wait poll for it and stop when
 * cancelled; `work` then finds the holder's reference stored.
 */
export async function withReferenceLock<T>(
  path: string, work: () => Promise<T>, options: { readonly isCancelled?: () => boolean; readonly pollMs?: number } = {},
): Promise<T> {
  mkdirSync(dirname(path), { recursive: true });
  for (;;) {
    const release = await tryLock(path);
    if (release !== null) {
      try {
        return await work();
      } finally {
        await release().catch(() => undefined);
      }
    }
    if (options.isCancelled?.() === true) throw new EvalCancelledError();
    await sleep(options.pollMs ?? 200);
  }
}

/** The lock's release, or null while another process holds it. */
async function tryLock(path: string): Promise<(() => Promise<void>) | null> {
  try {
    // A lock lost to a takeover (this process stalled past the stale time) costs a second computation,
    // not a wrong file: each save is atomic and of the same bytes.
    return await lock(path, { realpath: false, stale: REFERENCE_LOCK_STALE_MS, retries: 0, onCompromised: () => undefined });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ELOCKED') return null;
    throw error;
  }
}
