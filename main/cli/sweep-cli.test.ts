import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from './run-cli.js';
import { nodeCliIo } from './node-io.js';
import { hasShared } from '../../app/node/golden.js';
import { storiesDir } from '../../app/node/test-support/stories.js';
import { liveLabWorkers } from '../../app/node/lab/lab-worker-client.js';
import type { SweepResults } from '../../app/lab/sweep-results.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
let dir: string;
const previousCache = process.env['KVSCOPE_CACHE_DIR'];

/**
 * 12 points on stories260k: quanto and HQQ at 2 and 4 bits with groups of 32 and 64 (the grid), HQQ
 * 8-bit at two residual lengths, quanto 4-bit at residual 16, and quanto 3-bit (refused), with one
 * point listed twice (counted once).
 */
function writeSpec(): string {
  const spec = join(dir, 'sweep.json');
  writeFileSync(spec, JSON.stringify({
    model: storiesDir(),
    fixed: { context: 128, windows: 2, 'residual-length': 32 },
    grid: { backend: ['quanto', 'hqq'], nbits: [2, 4], 'group-size': [32, 64] },
    points: [
      { backend: 'hqq', nbits: 8, 'group-size': 32, 'axis-key': 1, 'axis-value': 1 },
      { backend: 'hqq', nbits: 8, 'group-size': 32, 'axis-key': 1, 'axis-value': 1, 'residual-length': 16 },
      { backend: 'hqq', nbits: 8, 'group-size': 32, 'axis-key': 1, 'axis-value': 1, 'residual-length': 16 },
      { backend: 'quanto', nbits: 3 },
      { backend: 'quanto', nbits: 4, 'group-size': 32, 'residual-length': 16 },
    ],
  }));
  return spec;
}

async function sweep(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(['sweep', ...args], { ...nodeCliIo(), stdout: (t) => void (out += t), stderr: (t) => void (err += t) });
  return { code, out, err };
}

function results(folder: string): SweepResults {
  return JSON.parse(readFileSync(join(folder, 'results.json'), 'utf8')) as SweepResults;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kvscope-sweep-cli-'));
  process.env['KVSCOPE_CACHE_DIR'] = join(dir, 'cache');
});
afterAll(async () => {
  if (previousCache === undefined) delete process.env['KVSCOPE_CACHE_DIR'];
  else process.env['KVSCOPE_CACHE_DIR'] = previousCache;
  rmSync(dir, { recursive: true, force: true });
  for (let waited = 0; liveLabWorkers() > 0 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
  expect(liveLabWorkers()).toBe(0);
});

describe.skipIf(!hasShared())('kvscope sweep on stories260k', () => {
  let whole: SweepResults;

  it('runs a 12-point sweep: one folder per point, results derived, a refused point recorded with its reason', async () => {
    const { code, err } = await sweep(['--spec', writeSpec(), '--out', join(dir, 'whole'), '--jobs', '2']);
    expect(code).toBe(0);
    whole = results(join(dir, 'whole'));
    expect(whole.points).toBe(12);
    expect(whole.rows).toHaveLength(12);
    const names = whole.rows.map((row) => row.name);
    for (const name of names) expect(readdirSync(join(dir, 'whole', name)).sort()).toEqual(expect.arrayContaining(['settings.json']));
    const refused = whole.rows.find((row) => row.options['nbits'] === 3)!;
    expect(refused.status).toBe('refused');
    expect(refused.reason).toMatch(/nbits/);
    expect(err).toMatch(/refused/);
    // The reference is made sure of first, and its size said (in the sweep's own cache folder, or read from it).
    // Two jobs: the memory that costs is said before the points (stories260k's weights are inside its .onnx: read in place through a derived graph, shared).
    expect(err).toMatch(/kvscope sweep: the 2 jobs, a process each, share one copy of the model's weights \([\d.]+ MiB inside the \.onnx file, read in place, memory-mapped\); each job adds its own working memory\./);
    expect(err).toMatch(/kvscope sweep: reference (\d+ windows? computed and stored|read from the cache) \([\d.]+ [KMG]iB on disk; kvscope cache list\)/);
    expect(whole.rows.filter((row) => row.status === 'ok')).toHaveLength(11);
    // More bits, less divergence: quanto 2 > 4, HQQ 2 > 4 > 8.
    const kld = (backend: string, nbits: number, group: number): number => whole.rows.find((r) => r.options['backend'] === backend && r.options['nbits'] === nbits && r.options['group-size'] === group)!.result!.kldMean;
    expect(kld('quanto', 2, 32)).toBeGreaterThan(kld('quanto', 4, 32));
    expect(kld('hqq', 2, 32)).toBeGreaterThan(kld('hqq', 4, 32));
    expect(kld('hqq', 4, 32)).toBeGreaterThan(kld('hqq', 8, 32));
    const csv = readFileSync(join(dir, 'whole', 'results.csv'), 'utf8').split('\r\n');
    expect(csv[0]).toMatch(/^index,name,status,reason,opt_axis_key,/);
    expect(csv).toHaveLength(14);
    // A rerun finds every point complete and changes nothing.
    const again = await sweep(['--spec', join(dir, 'sweep.json'), '--out', join(dir, 'whole')]);
    expect(again.err).toMatch(/12 complete, 0 to run/);
    expect(results(join(dir, 'whole'))).toEqual(whole);
  });

  it('sweeps where the cache is dequantized (--dequantize graph|host as a grid axis): the same figures, the path in each row', async () => {
    const spec = join(dir, 'paths.json');
    writeFileSync(spec, JSON.stringify({
      model: storiesDir(),
      fixed: { context: 128, windows: 2, 'residual-length': 16 },
      grid: { dequantize: ['graph', 'host'], nbits: [2, 4] },
    }));
    const { code } = await sweep(['--spec', spec, '--out', join(dir, 'paths')]);
    expect(code).toBe(0);
    const rows = results(join(dir, 'paths')).rows;
    expect(rows).toHaveLength(4);
    for (const row of rows) expect(row.settings?.dequantize).toBe(row.options['dequantize']);
    for (const nbits of [2, 4]) {
      const [graph, host] = (['graph', 'host'] as const).map((path) => rows.find((r) => r.options['nbits'] === nbits && r.options['dequantize'] === path)!.result);
      expect(graph).toEqual(host);
      expect(graph!.kldMean).toBeGreaterThan(0);
    }
    const csv = readFileSync(join(dir, 'paths', 'results.csv'), 'utf8').split('\r\n');
    expect(csv[0]!.split(',')).toEqual(expect.arrayContaining(['opt_dequantize', 'dequantize']));
  });

  it('sharded 1/3, 2/3, 3/3 then merged gives the unsharded results', async () => {
    for (const shard of ['1/3', '2/3', '3/3']) {
      const { code } = await sweep(['--spec', join(dir, 'sweep.json'), '--out', join(dir, `shard-${shard[0]}`), '--shard', shard]);
      expect(code).toBe(0);
    }
    expect(results(join(dir, 'shard-2')).rows.map((row) => row.index)).toEqual([1, 4, 7, 10]);
    const merged = await sweep(['merge', join(dir, 'shard-1'), join(dir, 'shard-2'), join(dir, 'shard-3'), '--out', join(dir, 'merged')]);
    expect(merged.code).toBe(0);
    expect(results(join(dir, 'merged'))).toEqual(whole);
    expect(readFileSync(join(dir, 'merged', 'results.csv'), 'utf8')).toBe(readFileSync(join(dir, 'whole', 'results.csv'), 'utf8'));
    // Another sweep's folder is refused.
    writeFileSync(join(dir, 'other.json'), JSON.stringify({ model: storiesDir(), grid: { nbits: [2] } }));
    const other = await sweep(['--spec', join(dir, 'other.json'), '--out', join(dir, 'whole')]);
    expect(other.code).toBe(1);
    expect(other.err).toMatch(/holds another sweep/);
  });

  it('resumes after being killed, leaving only complete points, and ends with the same results', async () => {
    const out = join(dir, 'killed');
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'main/cli/kvscope.ts'), 'sweep', '--spec', join(dir, 'sweep.json'), '--out', out], {
      cwd: ROOT, env: { ...process.env }, stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
    // Kill it (SIGKILL: no cleanup at all) once a few points are done and others are under way.
    for (let waited = 0; waited < 60_000; waited += 20) {
      const complete = existsSync(out) ? readdirSync(out).filter((name) => !name.startsWith('.') && !name.endsWith('.json') && !name.endsWith('.csv')) : [];
      if (complete.length >= 4) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    await exited;
    const left = readdirSync(out).filter((name) => !name.startsWith('.') && !name.endsWith('.json') && !name.endsWith('.csv'));
    expect(left.length).toBeGreaterThanOrEqual(4);
    expect(left.length).toBeLessThan(12);
    // Every point folder left is complete: settings.json and its eval.json or failure.json.
    for (const name of left) {
      const files = readdirSync(join(out, name));
      expect(files).toContain('settings.json');
      expect(files.some((file) => file === 'eval.json' || file === 'failure.json')).toBe(true);
    }
    const resumed = await sweep(['--spec', join(dir, 'sweep.json'), '--out', out]);
    expect(resumed.code).toBe(0);
    expect(resumed.err).toMatch(new RegExp(`${left.length} complete, ${12 - left.length} to run`));
    expect(readdirSync(out).filter((name) => name.startsWith('.'))).toEqual([]);
    expect(results(out)).toEqual(whole);
  });

  it('Ctrl-C stops the running points and records none of them', async () => {
    const out = join(dir, 'interrupted');
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'main/cli/kvscope.ts'), 'sweep', '--spec', join(dir, 'sweep.json'), '--out', out], {
      cwd: ROOT, env: { ...process.env }, stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
    const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
    for (let waited = 0; waited < 60_000; waited += 20) {
      if (existsSync(out) && readdirSync(out).filter((name) => !name.startsWith('.') && !name.endsWith('.json') && !name.endsWith('.csv')).length >= 2) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGINT');
    expect(await exited).toBe(1);
    expect(stderr).toMatch(/interrupted with \d+ of 12 points complete; run the same command again to resume/);
    const rows = results(out).rows;
    expect(rows.length).toBeLessThan(12);
    expect(readdirSync(out).filter((name) => name.startsWith('.'))).toEqual([]);
    for (const row of rows) expect(row).toEqual(whole.rows.find((w) => w.index === row.index));
  });
});

describe.skipIf(!hasShared())('kvscope sweep --preset runtimes (issue 27): the runtimes\' KV formats next to transformers\' 4-bit caches', () => {
  it('synthetic (head_dim 64): one command, every format measured, the family, formats and runtime bits in results.csv and the table', async () => {
    const out = join(dir, 'runtimes');
    const { code, out: table } = await sweep(['--preset', 'runtimes', '--model', 'synthetic', '--out', out, '--windows', '1', '--context', '64']);
    expect(code).toBe(0);
    const rows = results(out).rows;
    expect(rows.map((row) => row.status)).toEqual(Array(12).fill('ok'));
    const row = (name: string) => rows.find((r) => r.name === name)!;
    expect(row('backend-quanto_nbits-4').settings).toMatchObject({ family: 'transformers', backend: 'quanto', nbits: 4 });
    expect(row('backend-quanto_nbits-4').result!.formatBitsPerValue).toBeUndefined();
    expect(row('kv-format-llama.cpp-q4_0-rot').settings).toMatchObject({ family: 'llama.cpp', kvFormatKey: 'llama.cpp:q4_0+rot', kvFormatValue: 'llama.cpp:q4_0+rot' });
    // bits per value as the runtimes count them: a row's bytes · 8 / head_dim
    const bits = Object.fromEntries(rows.filter((r) => r.settings!.kvFormatKey !== undefined).map((r) => [r.settings!.kvFormatKey, r.result!.formatBitsPerValue]));
    expect(bits).toEqual({
      'llama.cpp:q8_0': 8.5, 'llama.cpp:q8_0+rot': 8.5, 'llama.cpp:q4_0': 4.5, 'llama.cpp:q4_0+rot': 4.5, 'vllm:fp8_e4m3': 8, 'vllm:fp8_e5m2': 8,
      nvfp4: 4.5, 'mlx:4bit-g64': 5, 'ort-webgpu:q8': 8.5, 'ort-webgpu:q4': 4.5,
    });
    // more bits, less divergence, within a runtime
    expect(row('kv-format-llama.cpp-q8_0').result!.kldMean).toBeLessThan(row('kv-format-llama.cpp-q4_0').result!.kldMean);
    const csv = readFileSync(join(out, 'results.csv'), 'utf8').split('\r\n');
    const header = csv[0]!.split(',');
    expect(header).toEqual(expect.arrayContaining(['family', 'kv_format_key', 'kv_format_value', 'format_bits_per_value']));
    // family, formats, then transformers' backend columns left empty (backend … residual_length), layers, parts
    expect(csv.find((line) => line.includes('kv-format-nvfp4'))).toContain(',"TensorRT-LLM, vLLM, SGLang",nvfp4,nvfp4,,,,,,,all,both,');
    expect(csv.find((line) => line.includes('backend-hqq_nbits-4'))).toMatch(/,transformers,,,hqq,4,/);
    expect(table).toMatch(/kv-format-mlx-4bit-g64\s+ok\s+5\.\d\d\s+5\.00\s/);
  }, 240_000);

  it('synthetic-8b-kv (Llama-3-8B\'s KV geometry: head_dim 128, 8 KV heads, 32 layers): every format evaluates, ordered by bits within each runtime', async () => {
    const out = join(dir, 'runtimes-128');
    const { code } = await sweep(['--preset', 'runtimes', '--model', 'synthetic-8b-kv', '--out', out, '--windows', '1', '--context', '48']);
    expect(code).toBe(0);
    const rows = results(out).rows;
    expect(rows.map((row) => [row.name, row.status])).toEqual(rows.map((row) => [row.name, 'ok']));
    const kld = (format: string): number => rows.find((r) => r.settings!.kvFormatKey === format)!.result!.kldMean;
    expect(kld('llama.cpp:q8_0')).toBeLessThan(kld('llama.cpp:q4_0'));
    expect(kld('ort-webgpu:q8')).toBeLessThan(kld('ort-webgpu:q4'));
    expect(rows.find((r) => r.settings!.kvFormatKey === 'mlx:4bit-g64')!.result!.formatBitsPerValue).toBe(5);
  }, 600_000);

  it('synthetic-qwen2.5-0.5b (Qwen2.5-0.5B\'s geometry: head_dim 64, 2 KV heads, 24 layers, a 151,936-token vocabulary): every format evaluates', async () => {
    const out = join(dir, 'runtimes-qwen');
    const { code } = await sweep(['--preset', 'runtimes', '--model', 'synthetic-qwen2.5-0.5b', '--out', out, '--windows', '1', '--context', '32']);
    expect(code).toBe(0);
    const rows = results(out).rows;
    expect(rows).toHaveLength(12);
    expect(rows.map((row) => [row.name, row.status])).toEqual(rows.map((row) => [row.name, 'ok']));
    const kld = (format: string): number => rows.find((r) => r.settings!.kvFormatKey === format)!.result!.kldMean;
    for (const row of rows) expect(Number.isFinite(row.result!.kldMean)).toBe(true);
    expect(kld('llama.cpp:q8_0')).toBeLessThan(kld('llama.cpp:q4_0'));
    expect(kld('ort-webgpu:q8')).toBeLessThan(kld('ort-webgpu:q4'));
    expect(rows.find((r) => r.settings!.kvFormatKey === 'nvfp4')!.result!.formatBitsPerValue).toBe(4.5);
  }, 900_000);
});
