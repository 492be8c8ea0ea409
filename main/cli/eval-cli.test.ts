import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './run-cli.js';
import { nodeCliIo } from './node-io.js';
import { hasShared } from '../../app/node/golden.js';
import { storiesDir } from '../../app/node/test-support/stories.js';
import { parseEvalRecord } from '../../app/lab/eval-record.js';
import { liveLabWorkers } from '../../app/node/lab/lab-worker-client.js';

let dir: string;
const previousCache = process.env['KVSCOPE_CACHE_DIR'];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kvscope-eval-cli-'));
  // References of these tests go to a cache of their own (the worker threads inherit it).
  process.env['KVSCOPE_CACHE_DIR'] = join(dir, 'cache');
});
afterAll(async () => {
  if (previousCache === undefined) delete process.env['KVSCOPE_CACHE_DIR'];
  else process.env['KVSCOPE_CACHE_DIR'] = previousCache;
  rmSync(dir, { recursive: true, force: true });
  for (let waited = 0; liveLabWorkers() > 0 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
  expect(liveLabWorkers()).toBe(0);
});

async function evalCli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(['eval', ...args], { ...nodeCliIo(), stdout: (t) => void (out += t), stderr: (t) => void (err += t) });
  return { code, out, err };
}

describe.skipIf(!hasShared())('kvscope eval on stories260k (through a lab worker thread)', () => {
  it('--json prints the documented summary and --out writes an eval record that reads back', async () => {
    const out = join(dir, 'eval.json');
    const { code, out: stdout, err } = await evalCli(['--model', storiesDir(), '--backend', 'hqq', '--nbits', '8', '--axis-key', '1', '--axis-value', '1',
      '--group-size', '32', '--residual-length', '32', '--windows', '2', '--json', '--out', out]);
    expect(err).toBe('');
    expect(code).toBe(0);
    const json = JSON.parse(stdout) as Record<string, unknown> & { kld: Record<string, number>; deltaP: Record<string, number> };
    expect(json).toMatchObject({ ok: true, tokens: 510, windows: 2, context: 512, feed: 'chunked', record: out });
    for (const key of ['ppl', 'pplReference', 'top1Agreement', 'bitsPerValue', 'storedBytes']) expect(typeof json[key]).toBe('number');
    expect(Object.keys(json.kld)).toEqual(expect.arrayContaining(['mean', 'p99', 'max']));
    expect(Object.keys(json.deltaP)).toEqual(expect.arrayContaining(['mean', 'rms']));
    // 8-bit HQQ within 1% of the reference's perplexity.
    expect(Math.abs((json['ppl'] as number) / (json['pplReference'] as number) - 1)).toBeLessThan(0.01);
    // HQQ 8-bit, groups of 32 with fp32 scale and zero: 8 + 2·32/32 = 10 bits per value (the residual is empty at 512 = 256 + 8·32).
    expect(json['bitsPerValue']).toBe(10);
    const record = parseEvalRecord(readFileSync(out, 'utf8'));
    expect(record.format).toBe('kvscope-eval-record');
    expect(record.summary.ppl).toBe(json['ppl']);
    expect(record.settings.text.name).toBe('kvscope:default');
    expect(record.perWindow).toHaveLength(2);
    // Quantized caches say where they were dequantized: the default is the graph path.
    expect(json['dequantize']).toBe('graph');
    expect(record.dequantize).toBe('graph');
    // How the session computed, as the saved record says it: kvscope eval prepacks the weights.
    expect(record.session?.prepacked).toBe(true);
    expect(json['session']).toEqual(record.session);
    const host = await evalCli(['--model', storiesDir(), '--backend', 'hqq', '--nbits', '8', '--axis-key', '1', '--axis-value', '1',
      '--group-size', '32', '--residual-length', '32', '--windows', '2', '--json', '--dequantize', 'host']);
    expect(host.code).toBe(0);
    const hostJson = JSON.parse(host.out) as Record<string, unknown>;
    expect(hostJson['dequantize']).toBe('host');
    expect(hostJson['dequantizeReason']).toBeUndefined();
    for (const key of ['ppl', 'pplReference', 'kld', 'deltaP', 'top1Agreement', 'storedBytes']) expect(hostJson[key]).toEqual(json[key]);
    // Where the default ran on the host, --json says why, as the record and the text report do.
    const targeted = await evalCli(['--model', storiesDir(), '--windows', '1', '--quantize-layers', '1', '--json']);
    expect(targeted.code).toBe(0);
    const targetedJson = JSON.parse(targeted.out) as Record<string, unknown>;
    expect(targetedJson['dequantize']).toBe('host');
    expect(targetedJson['dequantizeReason']).toMatch(/--quantize-layers\/--quantize-parts targets are not rewritten into the graph/);
  });

  it('prints llama.cpp\'s statistics as text, reads --text FILE, and says what a bad window does', async () => {
    const text = join(dir, 'text.txt');
    writeFileSync(text, 'Once upon a time, there was a little dog. '.repeat(80));
    const report = await evalCli(['--model', storiesDir(), '--cache', 'dynamic', '--text', text, '--context', '128']);
    expect(report.code).toBe(0);
    expect(report.out).toContain('====== KL divergence statistics ======');
    expect(report.out).toMatch(/Mean {4}KLD: +0\.000000 ±/);
    expect(report.out).toMatch(/Same top p: 100\.000 ±/);
    const short = await evalCli(['--model', storiesDir(), '--text', text, '--context', '4096']);
    expect(short.code).toBe(1);
    expect(short.err).toMatch(/fewer than one window of --context 4096/);
    const dynamicTargets = await evalCli(['--model', storiesDir(), '--cache', 'dynamic', '--quantize-parts', 'key']);
    expect(dynamicTargets.code).toBe(1);
    expect(dynamicTargets.err).toMatch(/no effect with --cache dynamic/);
    const dynamicPath = await evalCli(['--model', storiesDir(), '--cache', 'dynamic', '--dequantize', 'graph']);
    expect(dynamicPath.code).toBe(1);
    expect(dynamicPath.err).toMatch(/--dequantize says where the quantized cache is dequantized; it has no effect with --cache dynamic/);
  });

  it('exits 2 with the preflight\'s refusal', async () => {
    const { code, err } = await evalCli(['--model', storiesDir(), '--backend', 'quanto', '--nbits', '3', '--windows', '1']);
    expect(code).toBe(2);
    expect(err).toMatch(/preflight refuses/);
  });
});
