import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from './run-cli.js';
import { nodeCliIo } from './node-io.js';
import { decodeModel } from '../../app/onnx/onnx-model.js';
import { writeModelWithExternalData } from '../../app/node/onnx/write-external-data.js';
import { ensureSyntheticModel } from '../../app/node/synthetic/ensure-synthetic-model.js';
import { testCacheDir } from '../../app/node/synthetic/test-support/synthetic-session.js';
import { liveLabWorkerPids, liveLabWorkers } from '../../app/node/lab/lab-worker-client.js';
import type { SweepResults } from '../../app/lab/sweep-results.js';
import { alive } from '../../app/node/test-support/processes.js';

let dir: string;
let model: string;
const previousCache = process.env['KVSCOPE_CACHE_DIR'];

async function sweep(args: string[]): Promise<{ code: number; err: string }> {
  let err = '';
  const code = await runCli(['sweep', ...args], { ...nodeCliIo(), stdout: () => undefined, stderr: (t) => void (err += t) });
  return { code, err };
}

/** The processes whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    try {
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid ? [Number(name)] : [];
    } catch {
      return []; // gone meanwhile
    }
  });
}

/** Calls `each` every 10 ms until `done` settles. */
async function watching<T>(done: Promise<T>, each: () => void): Promise<T> {
  const timer = setInterval(each, 10);
  try {
    return await done;
  } finally {
    clearInterval(timer);
  }
}

/** No point folder left half-written (sweep-folder.ts writePoint: a .partial folder renamed into place). */
function partials(folder: string): string[] {
  return readdirSync(folder).filter((name) => name.includes('.partial'));
}

/** results.json: derived from the point records, no timings in it. */
function results(folder: string): SweepResults {
  return JSON.parse(readFileSync(join(folder, 'results.json'), 'utf8')) as SweepResults;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kvscope-sweep-jobs-'));
  process.env['KVSCOPE_CACHE_DIR'] = join(dir, 'cache');
  // The synthetic model with its weights in external data (as large exports keep them): the case whose jobs share them.
  const source = await ensureSyntheticModel('synthetic', { cacheDir: testCacheDir() });
  model = join(dir, 'model');
  mkdirSync(join(model, 'onnx'), { recursive: true });
  for (const file of readdirSync(source)) if (file.endsWith('.json')) copyFileSync(join(source, file), join(model, file));
  await writeModelWithExternalData(decodeModel(readFileSync(join(source, 'onnx', 'model.onnx'))), join(model, 'onnx', 'model.onnx'), { location: () => 'model.onnx_data' });
  writeFileSync(join(dir, 'sweep.json'), JSON.stringify({
    model, fixed: { context: 64, windows: 2 }, grid: { nbits: [2, 4], dequantize: ['graph', 'host'] },
  }));
}, 120_000);
afterAll(async () => {
  if (previousCache === undefined) delete process.env['KVSCOPE_CACHE_DIR'];
  else process.env['KVSCOPE_CACHE_DIR'] = previousCache;
  rmSync(dir, { recursive: true, force: true });
  for (let waited = 0; liveLabWorkers() > 0 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
  expect(liveLabWorkers()).toBe(0);
});

describe('kvscope sweep --jobs 2 on a model with external data (issue 23)', () => {
  it('gives the results of --jobs 1, its jobs sharing the weights (and saying so), each job a process of its own', async () => {
    const jobPids = new Set<number>();
    const two = await watching(sweep(['--spec', join(dir, 'sweep.json'), '--out', join(dir, 'two'), '--jobs', '2']), () => {
      for (const pid of liveLabWorkerPids()) jobPids.add(pid);
    });
    expect(two.code).toBe(0);
    expect(two.err).toMatch(/kvscope sweep: the 2 jobs, a process each, share one copy of the model's weights \([\d.]+ MiB of external data, memory-mapped\); each job adds its own working memory\. Each job's RSS counts the shared weights once; the jobs' PSS \(smaps_rollup\) adds up to one copy\./);
    // two processes besides this one, both gone once the sweep returned
    expect(jobPids.size).toBe(2);
    expect(jobPids.has(process.pid)).toBe(false);
    expect([...jobPids].filter(alive)).toEqual([]);
    const one = await watching(sweep(['--spec', join(dir, 'sweep.json'), '--out', join(dir, 'one'), '--jobs', '1']), () => {
      // --jobs 1 runs its job in a thread of this process
      expect(liveLabWorkerPids()).toEqual([]);
    });
    expect(one.code).toBe(0);
    expect(one.err).not.toMatch(/jobs, a process each|holds its own copy/);
    const [jobs2, jobs1] = [results(join(dir, 'two')), results(join(dir, 'one'))];
    expect(jobs2.rows).toHaveLength(4);
    expect(jobs2.rows.every((row) => row.status === 'ok' && row.result!.kldMean > 0)).toBe(true);
    // Identical, bit for bit: prepacking is off for every session, and the arena changes where buffers live, not what is computed.
    expect(jobs2).toEqual(jobs1);
  });
});

describe.skipIf(process.platform !== 'linux')('kvscope sweep --jobs 2: a job process lost or a Ctrl-C (issue 23)', () => {
  it('a job process killed with SIGKILL mid-point fails that point, saying so; the other job runs the rest, and a resumed sweep redoes it', async () => {
    const out = join(dir, 'killed');
    let killed = 0;
    // The second job's process starts with its first point (the first job's computes the reference before it): killed at once, mid-point.
    const first = await watching(sweep(['--spec', join(dir, 'sweep.json'), '--out', out, '--jobs', '2']), () => {
      const pids = liveLabWorkerPids();
      if (killed !== 0 || pids.length < 2) return;
      killed = pids[1]!;
      process.kill(killed, 'SIGKILL');
    });
    expect(killed).not.toBe(0);
    expect(first.code).toBe(0);
    expect(first.err).toContain(`The lab worker (process ${killed}) was killed by SIGKILL before its job finished: it may have run out of memory`);
    const rows = results(out).rows;
    expect(rows.filter((row) => row.status === 'failed')).toHaveLength(1);
    expect(rows.filter((row) => row.status === 'ok')).toHaveLength(3);
    expect(partials(out)).toEqual([]);

    const resumed = await sweep(['--spec', join(dir, 'sweep.json'), '--out', out, '--jobs', '2']);
    expect(resumed.code).toBe(0);
    expect(resumed.err).toMatch(/3 complete, 1 to run \(1 job\)/);
    expect(results(out)).toEqual(results(join(dir, 'one')));
  }, 120_000);

  it('Ctrl-C (SIGINT to the whole process group, as a terminal sends it) stops the sweep cleanly and leaves no job process behind', async () => {
    const out = join(dir, 'interrupted');
    const entry = fileURLToPath(new URL('./kvscope.ts', import.meta.url));
    // its own process group, as a shell gives a command: the group's signal reaches the jobs too
    const cli = spawn(process.execPath, ['--import', 'tsx', entry, 'sweep', '--spec', join(dir, 'sweep.json'), '--out', out, '--jobs', '2'], {
      cwd: fileURLToPath(new URL('../../', import.meta.url)), detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1' },
    });
    let stderr = '';
    cli.stderr!.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
    const closed = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => cli.once('close', (code, signal) => resolve([code, signal])));
    const jobs = new Set<number>();
    for (const started = Date.now(); jobs.size < 2 && Date.now() - started < 60_000;) {
      for (const pid of childrenOf(cli.pid!)) jobs.add(pid);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(jobs.size).toBe(2);
    process.kill(-cli.pid!, 'SIGINT');
    const [code, signal] = await closed;
    expect(stderr).not.toMatch(/terminate called|Napi::Error/);
    expect(signal, stderr).toBeNull();
    expect(stderr).toMatch(/stopping; running points are cancelled and not recorded/);
    // the running points were cancelled and not recorded, none recorded as failed (that a job process ignores the
    // group's SIGINT itself is app/node/lab/lab-worker-process.test.ts's)
    expect(stderr).not.toMatch(/killed by SIGINT|worker-crashed/);
    expect(results(out).rows.filter((row) => row.status !== 'ok')).toEqual([]);
    // interrupted (exit 1) with the points done so far, or, when the last ones had just finished, complete (exit 0)
    expect([0, 1], stderr).toContain(code);
    if (code === 1) expect(stderr).toMatch(/run the same command again to resume/);
    expect([...jobs].filter(alive)).toEqual([]);
    expect(partials(out)).toEqual([]);
  }, 120_000);
});
