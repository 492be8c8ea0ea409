import { afterAll, beforeAll, expect } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { liveLabWorkers } from '../../../app/node/lab/lab-worker-client.js';
import { nodeCliIo } from '../node-io.js';
import { runCli } from '../run-cli.js';

export interface CliOutcome {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/**
 * One temporary folder per test file, with kvscope's caches (references, rewrites, synthetic models) in
 * `<dir>/cache` through KVSCOPE_CACHE_DIR, which the lab's worker threads inherit; removed afterwards,
 * the variables restored, and every lab worker gone (a test that leaves one running fails). Call it at
 * the top of a test file; `dir()` is valid inside the tests.
 */
export function useCliSandbox(prefix: string, unset: readonly string[] = []): { readonly dir: () => string } {
  let dir = '';
  const names = ['KVSCOPE_CACHE_DIR', ...unset];
  const previous = new Map(names.map((name) => [name, process.env[name]]));
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), `kvscope-${prefix}-`));
    process.env['KVSCOPE_CACHE_DIR'] = join(dir, 'cache');
    for (const name of unset) delete process.env[name];
  });
  afterAll(async () => {
    for (const [name, value] of previous) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(dir, { recursive: true, force: true });
    for (let waited = 0; liveLabWorkers() > 0 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    expect(liveLabWorkers()).toBe(0);
  });
  return { dir: () => dir };
}

/** `kvscope ARGS…` in this process, its exit code and what it printed. */
export async function cli(args: readonly string[]): Promise<CliOutcome> {
  let out = '';
  let err = '';
  const code = await runCli([...args], { ...nodeCliIo(), stdout: (t) => void (out += t), stderr: (t) => void (err += t) });
  return { code, out, err };
}
