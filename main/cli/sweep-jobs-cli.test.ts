import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './run-cli.js';
import { nodeCliIo } from './node-io.js';
import { decodeModel } from '../../app/onnx/onnx-model.js';
import { writeModelWithExternalData } from '../../app/node/onnx/write-external-data.js';
import { ensureSyntheticModel } from '../../app/node/synthetic/ensure-synthetic-model.js';
import { testCacheDir } from '../../app/node/synthetic/test-support/synthetic-session.js';
import { liveLabWorkers } from '../../app/node/lab/lab-worker-client.js';
import type { SweepResults } from '../../app/lab/sweep-results.js';

let dir: string;
let model: string;
const previousCache = process.env['KVSCOPE_CACHE_DIR'];

async function sweep(args: string[]): Promise<{ code: number; err: string }> {
  let err = '';
  const code = await runCli(['sweep', ...args], { ...nodeCliIo(), stdout: () => undefined, stderr: (t) => void (err += t) });
  return { code, err };
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
  it('gives the results of --jobs 1, its jobs sharing the weights (and saying so)', async () => {
    const two = await sweep(['--spec', join(dir, 'sweep.json'), '--out', join(dir, 'two'), '--jobs', '2']);
    expect(two.code).toBe(0);
    expect(two.err).toMatch(/kvscope sweep: the 2 jobs share one copy of the model's weights \([\d.]+ MiB of external data, memory-mapped\); each job adds its own working memory\. RSS counts the shared weights once per job, PSS \(smaps_rollup\) once\./);
    const one = await sweep(['--spec', join(dir, 'sweep.json'), '--out', join(dir, 'one'), '--jobs', '1']);
    expect(one.code).toBe(0);
    expect(one.err).not.toMatch(/jobs share|holds its own copy/);
    const [jobs2, jobs1] = [results(join(dir, 'two')), results(join(dir, 'one'))];
    expect(jobs2.rows).toHaveLength(4);
    expect(jobs2.rows.every((row) => row.status === 'ok' && row.result!.kldMean > 0)).toBe(true);
    // Identical, bit for bit: prepacking is off for every session, and the arena changes where buffers live, not what is computed.
    expect(jobs2).toEqual(jobs1);
  });
});
