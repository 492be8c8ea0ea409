import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A tmpfs a test mounted (another file system than the disk; a small one fills up), or why none could be. */
export type TestTmpfs = { readonly dir: string; unmount(): void } | { readonly dir: null; readonly skipReason: string };

/**
 * Mounts a fresh tmpfs of `size` (mount(8)'s syntax: `256k`, `64m`) on a new temporary folder. Needs
 * root (or CAP_SYS_ADMIN); elsewhere the reason comes back for the test to skip with.
 */
export function mountTestTmpfs(size: string): TestTmpfs {
  const dir = mkdtempSync(join(tmpdir(), 'kvscope-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return { dir: null, skipReason: `mounting a tmpfs is not permitted here (${stderr || (error as Error).message}); run as root to test` };
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', [dir], { stdio: 'pipe' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
