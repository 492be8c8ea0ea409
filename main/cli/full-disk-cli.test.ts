import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SweepResults } from '../../app/lab/sweep-results.js';
import { hasShared } from '../../app/node/golden.js';
import { liveLabWorkers } from '../../app/node/lab/lab-worker-client.js';
import { storiesDir } from '../../app/node/test-support/stories.js';
import { mountTestTmpfs, type TestTmpfs } from '../../app/node/test-support/tmpfs.js';
import { nodeCliIo } from './node-io.js';
import { runCli } from './run-cli.js';

/*
 * Issue 24 point 2: an I/O failure never becomes a result. A 256 KiB tmpfs is filled to its last
 * pages; the sweep's point cannot write its eval.json. The sweep must stop non-zero with a line that
 * names the full disk and what to do, record nothing for that point (no failure.json the next run
 * would keep), and once space is freed the same command completes the point.
 */
/** Mounted by beforeAll, so that a run that filters every test out mounts nothing (its afterAll would not run). */
let tmpfs: TestTmpfs | null = null;
const previousCache = process.env['KVSCOPE_CACHE_DIR'];
let work = '';

beforeAll(() => {
  if (!hasShared()) return;
  tmpfs = mountTestTmpfs('256k');
  if (tmpfs.dir === null) console.warn(`full-disk tests skipped: ${tmpfs.skipReason}`);
  work = mkdtempSync(join(tmpdir(), 'kvscope-full-disk-'));
  // the eval reference cache stays on the real disk: only the records meet the full one
  process.env['KVSCOPE_CACHE_DIR'] = join(work, 'cache');
});

afterAll(async () => {
  if (previousCache === undefined) delete process.env['KVSCOPE_CACHE_DIR'];
  else process.env['KVSCOPE_CACHE_DIR'] = previousCache;
  for (let waited = 0; liveLabWorkers() > 0 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
  if (tmpfs?.dir != null) tmpfs.unmount();
  if (work !== '') rmSync(work, { recursive: true, force: true });
});

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(args, { ...nodeCliIo(), stdout: (t) => void (out += t), stderr: (t) => void (err += t) });
  return { code, out, err };
}

/** Fills the tmpfs until `leaveBytes` are free (a file `filler`); returns its path, to remove when space is freed. */
function fill(leaveBytes: number): string {
  const path = join(tmpfs!.dir!, 'filler');
  rmSync(path, { force: true });
  const { bavail, bsize } = statfsSync(tmpfs!.dir!);
  writeFileSync(path, Buffer.alloc(Math.max(0, bavail * bsize - leaveBytes)));
  expect(statfsSync(tmpfs!.dir!).bavail * bsize).toBeLessThanOrEqual(leaveBytes);
  return path;
}

describe.skipIf(!hasShared())('a full disk under the records (tmpfs of 256 KiB)', () => {
  it('sweep: stops non-zero naming the full disk, records no point as failed; after space is freed the rerun completes it', async (context) => {
    if (tmpfs?.dir == null) context.skip();
    const out = join(tmpfs!.dir!, 'sweep');
    const spec = join(work, 'sweep.json');
    writeFileSync(spec, JSON.stringify({ model: storiesDir(), fixed: { context: 128, windows: 2 }, points: [{ backend: 'quanto', nbits: 4, 'group-size': 32, 'residual-length': 16 }] }));
    // Room for sweep.json and the point's settings.json (a page each), not for its eval.json
    const filler = fill(2 * statfsSync(tmpfs!.dir!).bsize);
    const full = await cli(['sweep', '--spec', spec, '--out', out]);
    expect(full.code).toBe(1);
    expect(full.err).toMatch(/kvscope sweep: stopped: point \S+ could not be recorded: Cannot write \S+: the disk is full\./);
    expect(full.err).toMatch(/free space on the disk holding .+ then run the same command again/);
    expect(full.err).not.toMatch(/internal error|This is a bug/);
    // nothing recorded for the point: no folder (so no failure.json), no partial folder left
    expect(readdirSync(out).filter((name) => !['sweep.json', 'results.json', 'results.csv'].includes(name))).toEqual([]);
    // the derived table (written once the partial folder gave its page back) lists no row for it
    if (existsSync(join(out, 'results.json'))) expect((JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as SweepResults).rows).toEqual([]);

    rmSync(filler);
    const again = await cli(['sweep', '--spec', spec, '--out', out]);
    expect(again.code, again.err).toBe(0);
    expect(again.err).toMatch(/0 complete, 1 to run/);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as SweepResults;
    expect(results.rows.map((row) => row.status)).toEqual(['ok']);
    expect(results.rows[0]!.result!.ppl).toBeGreaterThan(1);
    const csv = readFileSync(join(out, 'results.csv'), 'utf8');
    expect(csv).not.toMatch(/disk is full/);
    const [point] = readdirSync(out).filter((name) => !name.endsWith('.json') && !name.endsWith('.csv'));
    expect(readdirSync(join(out, point!)).sort()).toEqual(['eval.json', 'settings.json']);
  }, 120_000);

  it('eval --out and run --out: the figures are printed, nothing half-written, exit 1 with the reason', async (context) => {
    if (tmpfs?.dir == null) context.skip();
    const filler = fill(0);
    const evalOut = join(tmpfs!.dir!, 'eval.json');
    const evalRun = await cli(['eval', '--model', storiesDir(), '--context', '128', '--windows', '2', '--cache', 'quantized', '--group-size', '32', '--out', evalOut]);
    expect(evalRun.code).toBe(1);
    expect(evalRun.out).toMatch(/PPL/);
    expect(evalRun.err).toMatch(/kvscope eval: the eval finished but its record could not be written: Cannot write \S+: the disk is full\. Free space/);
    const runOut = join(tmpfs!.dir!, 'run.json');
    const run = await cli(['run', '--model', storiesDir(), '--cache', 'dynamic', '--max-new-tokens', '8', '--out', runOut]);
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/the run finished but its record could not be written: Cannot write \S+: the disk is full\./);
    expect(readdirSync(tmpfs!.dir!).filter((name) => name !== 'filler' && name !== 'sweep')).toEqual([]);
    expect(existsSync(evalOut) || existsSync(runOut)).toBe(false);
    rmSync(filler);
  }, 120_000);
});
