import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cpSync, chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './run-cli.js';
import { nodeCliIo } from './node-io.js';
import { hasShared } from '../../app/node/golden.js';
import { README_FIRST_16, storiesDir } from '../../app/node/test-support/stories.js';
import { parseRunRecord } from '../../app/record/parse-run-record.js';
import type { CliIo } from '../../app/cli/io.js';
import type { RunJson } from '../../app/cli/run-command.js';
import { liveGenerationWorkers } from '../../app/node/worker/worker-client.js';

function capture(): { io: CliIo; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { io: { ...nodeCliIo(), stdout: (t) => void (out += t), stderr: (t) => void (err += t) }, out: () => out, err: () => err };
}

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = capture();
  const code = await runCli(['run', ...args], c.io);
  return { code, out: c.out(), err: c.err() };
}

/** stories260k takes quanto int4 with groups of 32 (= 4 heads · 8 dims of one token); residual 8 forces flushes. */
const QUANTIZED = ['--group-size', '32', '--residual-length', '8'];

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'kvscope-run-')); });
afterEach(async () => {
  rmSync(dir, { recursive: true, force: true });
  // Every run's worker thread is gone once its command returned (terminate is asynchronous).
  for (let waited = 0; liveGenerationWorkers() > 0 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
  expect(liveGenerationWorkers()).toBe(0);
});

describe.skipIf(!hasShared())('kvscope run on stories260k (through the worker thread)', () => {
  it("generates the README's greedy ids with a dynamic cache and streams them as text", async () => {
    const { code, out } = await run(['--model', storiesDir(), '--cache', 'dynamic', '--max-new-tokens', '16', '--json']);
    expect(code).toBe(0);
    const json = JSON.parse(out) as RunJson & { ok: boolean };
    expect(json.ok).toBe(true);
    expect(json.tokens).toEqual(README_FIRST_16);
    expect(json.promptTokens).toEqual([1]);
    expect(json.text.startsWith('Once upon a time, there was a little girl named Lily.')).toBe(true);
    expect(json.flushes).toEqual([0, 0, 0, 0, 0]);

    const streamed = await run(['--model', storiesDir(), '--cache', 'dynamic', '--max-new-tokens', '16']);
    expect(streamed.code).toBe(0);
    expect(streamed.out).toBe(`${json.text}\n`);
    expect(streamed.err).toMatch(/^-- 16 tokens \(max-new-tokens\) on cpu, onnxruntime 1\.30\.0/);
  });

  it('reports flushes, bytes by component, baselines, K/V error per layer and the reference lane with --json', async () => {
    const { code, out, err } = await run(['--model', storiesDir(), ...QUANTIZED, '--greedy', '--max-new-tokens', '32', '--reference', '--json']);
    expect(err).toBe('');
    expect(code).toBe(0);
    const json = JSON.parse(out) as RunJson;
    expect(json.tokens).toHaveLength(32);
    expect(json.tokens.slice(0, 16)).toEqual(README_FIRST_16);
    // 33 tokens through residual 8: the prefill's 1 token, then a flush each time 8 more wait.
    expect(json.flushes).toEqual(Array(5).fill(json.flushes[0]));
    expect(json.flushes[0]).toBeGreaterThan(0);
    const kv = json.kvBytes;
    expect(kv.totalBytes).toBe(kv.codeBytes + kv.metadataBytes + kv.fullPrecisionBytes);
    expect(kv.codeBytes).toBeGreaterThan(0);
    // 5 layers · 4 heads · (8 + 8) dims · 32 tokens cached after the last step (its token is not fed back)
    expect(json.baselineBytes).toEqual({ fp16: 5 * 4 * 16 * 32 * 2, fp32: 5 * 4 * 16 * 32 * 4 });
    expect(kv.totalBytes).toBeLessThan(json.baselineBytes.fp32);
    expect(json.error).toHaveLength(5);
    for (const layer of json.error) {
      expect(layer!.key.relFroErr).toBeGreaterThan(0);
      expect(layer!.key.relFroErr).toBeLessThan(0.5);
      expect(layer!.value.relFroErr).toBeGreaterThan(0);
    }
    expect(json.reference).toMatchObject({ steps: 32 });
    expect(json.reference!.top1Agreement).toBeGreaterThan(0.5);
    expect(json.reference!.meanKl).toBeGreaterThanOrEqual(0);
  });

  it('writes a run record atomically that loads back and names the exact graph', async () => {
    const path = join(dir, 'run.json');
    const { code } = await run(['--model', storiesDir(), ...QUANTIZED, '--max-new-tokens', '12', '--prompt', 'Once upon a time', '--out', path, '--json']);
    expect(code).toBe(0);
    expect(readdirSync(dir)).toEqual(['run.json']);
    const record = parseRunRecord(readFileSync(path, 'utf8'), path);
    expect(record.format).toBe('kvscope-run-record');
    expect(record.settings.prompt).toBe('Once upon a time');
    expect(record.steps).toHaveLength(12);
    expect(record.model.onnxFile).toBe('onnx/model.onnx');
    expect(record.model.onnxSha256).toBe(createHash('sha256').update(readFileSync(join(storiesDir(), 'onnx', 'model.onnx'))).digest('hex'));
    expect(record.executionProvider).toBe('cpu');
    expect(record.ortVersion).toBe('1.30.0');

    const csv = join(dir, 'run.csv');
    expect((await run(['--model', storiesDir(), ...QUANTIZED, '--max-new-tokens', '12', '--out', csv])).code).toBe(0);
    expect(readFileSync(csv, 'utf8').split('\r\n')).toHaveLength(1 + 12 + 1);
  });

  it('exits 2 with the preflight\'s message when the config is refused (a sliding window makes every layer sliding)', async () => {
    const folder = join(dir, 'stories-sliding');
    cpSync(storiesDir(), folder, { recursive: true });
    chmodSync(join(folder, 'config.json'), 0o644);
    const config = JSON.parse(readFileSync(join(folder, 'config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ ...config, sliding_window: 4096 }));
    const { code, out, err } = await run(['--model', folder, ...QUANTIZED, '--max-new-tokens', '4', '--json']);
    expect(code).toBe(2);
    expect(err).toContain(
      "`QuantizedCache` is only supported for models with only full attention layers. We found the following invalid layer types: {'sliding_attention'}",
    );
    const json = JSON.parse(out) as { ok: boolean; error: { code: string; diagnostics: { code: string }[] } };
    expect(json.ok).toBe(false);
    expect(json.error.code).toBe('refused');
    expect(json.error.diagnostics[0]!.code).toBe('unsupported-layer-types');
    expect(err).not.toMatch(/\n\s+at /);

    // The same folder runs with a full-precision cache.
    expect((await run(['--model', folder, '--cache', 'dynamic', '--max-new-tokens', '4', '--json'])).code).toBe(0);
  });

  it('exits 2 when the default cache settings do not fit the model, with the fix', async () => {
    const { code, err } = await run(['--model', storiesDir(), '--max-new-tokens', '4']);
    expect(code).toBe(2);
    expect(err).toContain('Group size (64) must be a divisor of (32)');
  });
});

describe('kvscope run: bad input', () => {
  it('exits 1 with one line and no stack trace for a missing folder, a bad flag value and an unknown flag', async () => {
    const cases: [string[], RegExp][] = [
      [['--model', join(dir, 'nowhere')], /--model .*nowhere is neither a folder nor an \.onnx file/],
      [['--model', dir, '--ep', 'tpu'], /--ep must be one of cpu, webgpu, cuda, dml, coreml, got "tpu"/],
      [['--model', dir, '--max-new-tokens', 'many'], /--max-new-tokens must be an integer, got "many"/],
      [['--model', dir, '--temperature', '0'], /`temperature` \(=0\) has to be a strictly positive float/],
      [['--model', dir, '--beams', '4'], /Unknown option '--beams'/],
      [[], /--model is required/],
    ];
    for (const [args, message] of cases) {
      const { code, err } = await run(args);
      expect(code, args.join(' ')).toBe(1);
      expect(err, args.join(' ')).toMatch(message);
      expect(err).not.toMatch(/\n\s+at /);
    }
  });

  it('exits 1 when the folder is not a model', async () => {
    const { code, err } = await run(['--model', dir, '--cache', 'dynamic']);
    expect(code).toBe(1);
    expect(err).toMatch(/^kvscope run: /);
    expect(err).not.toMatch(/\n\s+at /);
  });

  it('documents itself', async () => {
    const c = capture();
    expect(await runCli(['run', '--help'], c.io)).toBe(0);
    expect(c.out()).toContain('--max-new-tokens N');
    const help = capture();
    await runCli(['--help'], help.io);
    expect(help.out()).toContain('kvscope run --model');
  });
});
