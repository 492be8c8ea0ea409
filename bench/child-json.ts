import { spawn } from 'node:child_process';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** How a child process is started beyond its job: node's own flags (V8's), and environment variables added to this process's. */
export interface ChildConditions {
  readonly nodeFlags?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** called with the child's process id once it is spawned (to sample its memory from outside, bench/tree-memory.ts) */
  readonly onSpawn?: (pid: number) => void;
}

/**
 * Runs a bench child (`node [flags] --import tsx child.ts '<job JSON>'`) in a process of its own, so
 * its figures (ru_maxrss above all) are that run's alone, and resolves with the JSON object its last
 * stdout line holds. A non-zero exit or no JSON line rejects with the child's stderr tail.
 */
export function runChildJson<T>(child: string, job: unknown, conditions: ChildConditions = {}): Promise<T> {
  return new Promise((resolvePromise, reject) => {
    const proc = spawn(process.execPath, [...(conditions.nodeFlags ?? []), '--import', 'tsx', child, JSON.stringify(job)], {
      cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...conditions.env },
    });
    if (proc.pid !== undefined) conditions.onSpawn?.(proc.pid);
    let stdout = '';
    let stderr = '';
    proc.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; });
    proc.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
    proc.on('error', reject);
    proc.on('close', (code) => {
      const last = stdout.trim().split('\n').pop() ?? '';
      if (code !== 0 || !last.startsWith('{')) {
        reject(new Error(`bench/${basename(child)} exited with ${code} for ${JSON.stringify(job)}:\n${stderr.slice(-2000)}`));
        return;
      }
      resolvePromise(JSON.parse(last) as T);
    });
  });
}
