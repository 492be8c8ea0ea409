import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { SyntheticModelError } from '../../synthetic/synthetic-model-error.js';

/** Leftovers of a crashed writer older than this are removed; younger ones may still be in use. */
const ABANDONED_AFTER_MS = 30 * 60 * 1000;
const ATTEMPTS = 4;

/**
 * Creates the folder `target` atomically: `write` fills a fresh temporary sibling, which is then
 * renamed onto `target`, so readers see no folder or a complete one. Safe against concurrent
 * writers (other processes included): when `target` appears first, it is kept if `isValid` accepts
 * it, and otherwise moved aside, removed and replaced. Never deletes a folder `isValid` accepts.
 */
export async function publishFolder(
  target: string,
  write: (tempDir: string) => Promise<void>,
  isValid: (dir: string) => Promise<boolean>,
): Promise<void> {
  const parent = dirname(target);
  const name = basename(target);
  await mkdir(parent, { recursive: true });
  await removeAbandoned(parent, name);
  const temp = await mkdtemp(join(parent, `.${name}.tmp-`));
  try {
    // mkdtemp makes the folder private (0700); a published model is as readable as any cache entry
    await chmod(temp, 0o755);
    await write(temp);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        await rename(temp, target);
        return;
      } catch (error) {
        if (!targetExists(error)) throw error;
      }
      if (await isValid(target)) return; // another writer won the race with a good folder
      await moveAsideAndRemove(target, parent, name);
    }
    throw new SyntheticModelError(
      `could not replace ${target} after ${ATTEMPTS} attempts: another process keeps writing an invalid folder there. ` +
      'Remove the folder by hand, or point KVSCOPE_CACHE_DIR (or the cacheDir option) elsewhere.',
    );
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

/** rename(2) onto a non-empty directory: EEXIST or ENOTEMPTY on POSIX, EPERM on Windows. */
function targetExists(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'EEXIST' || code === 'ENOTEMPTY' || code === 'EPERM';
}

/** A rename is atomic where a recursive delete is not: readers never see half a folder. */
async function moveAsideAndRemove(target: string, parent: string, name: string): Promise<void> {
  const aside = join(parent, `.${name}.stale-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await rename(target, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // someone else moved it
    throw error;
  }
  await rm(aside, { recursive: true, force: true });
}

async function removeAbandoned(parent: string, name: string): Promise<void> {
  const prefixes = [`.${name}.tmp-`, `.${name}.stale-`];
  for (const entry of await readdir(parent)) {
    if (!prefixes.some((prefix) => entry.startsWith(prefix))) continue;
    const path = join(parent, entry);
    try {
      if (Date.now() - (await stat(path)).mtimeMs > ABANDONED_AFTER_MS) await rm(path, { recursive: true, force: true });
    } catch {
      // gone already, or in use by its owner: either way not ours to report
    }
  }
}
