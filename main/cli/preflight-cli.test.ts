import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runCli } from './run-cli.js';
import { nodeCliIo } from './node-io.js';
import { hasShared, sharedDir } from '../../app/node/golden.js';
import { GEMMA_3_1B_IT } from '../../app/config/test-support/dense-model-configs.js';
import { AI21_JAMBA_1_5_MINI } from '../../app/config/test-support/hybrid-model-configs.js';
import type { CliIo } from '../../app/cli/io.js';
import { estimateKvMemory } from '../../app/accounting/memory-what-if.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../app/cache/cache-config.js';
import { formatBytes } from '../../app/cli/byte-size.js';
import { modelConfigFromObject } from '../../app/config/model-config.js';

function capture(): { io: CliIo; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { io: { ...nodeCliIo(), stdout: (t) => void (out += t), stderr: (t) => void (err += t) }, out: () => out, err: () => err };
}

interface PreflightJson { ok: boolean; layerTypes: string[]; diagnostics: { code: string; severity: string; message: string; layers: number[] }[] }

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'kvscope-preflight-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function writeConfig(name: string, config: unknown): string {
  const folder = join(dir, name);
  mkdirSync(folder);
  writeFileSync(join(folder, 'config.json'), JSON.stringify(config, null, 2));
  return folder;
}

async function preflightJson(args: string[]): Promise<{ code: number; json: PreflightJson; err: string }> {
  const c = capture();
  const code = await runCli(['preflight', ...args, '--json'], c.io);
  return { code, json: JSON.parse(c.out()) as PreflightJson, err: c.err() };
}

describe('kvscope preflight', () => {
  it.skipIf(!hasShared())('passes stories260k (a model folder) with exit 0 and five full-attention layers', async () => {
    const { code, json } = await preflightJson(['--config', resolve(sharedDir(), 'models', 'stories260k')]);
    expect(code).toBe(0);
    expect(json.ok).toBe(true);
    expect(json.layerTypes).toEqual(Array(5).fill('full_attention'));
    expect(json.diagnostics.every((d) => d.severity !== 'error')).toBe(true);
  });

  it("refuses gemma-3-1b with transformers' exact message (exit 2) and runs it with full-attention-only", async () => {
    const folder = writeConfig('gemma', GEMMA_3_1B_IT.config);
    const refused = await preflightJson(['--config', join(folder, 'config.json')]);
    expect(refused.code).toBe(2);
    expect(refused.json.ok).toBe(false);
    const first = refused.json.diagnostics[0]!;
    expect(first.code).toBe('unsupported-layer-types');
    expect(first.message.split('\n')[0]).toBe(
      "`QuantizedCache` is only supported for models with only full attention layers. We found the following invalid layer types: {'sliding_attention'}",
    );
    expect(refused.json.layerTypes.flatMap((t, i) => (t === 'full_attention' ? [i] : []))).toEqual([5, 11, 17, 23]);

    const allowed = await preflightJson(['--config', folder, '--layer-policy', 'full-attention-only']);
    expect(allowed.code).toBe(0);
    expect(allowed.json.ok).toBe(true);
    expect(allowed.json.diagnostics.map((d) => d.code)).toContain('layers-kept-full-precision');
  });

  it('reports the unknown backend first, verbatim, for "HQQ" (exit 2)', async () => {
    const folder = writeConfig('gemma', GEMMA_3_1B_IT.config);
    const { code, json } = await preflightJson(['--config', folder, '--backend', 'HQQ']);
    expect(code).toBe(2);
    expect(json.diagnostics[0]!.message.split('\n')[0]).toBe('Unknown quantization backend `HQQ`');
  });

  it('flags the Jamba mamba layers that transformers lets through', async () => {
    const folder = writeConfig('jamba', AI21_JAMBA_1_5_MINI.config);
    const { code, json } = await preflightJson(['--config', folder]);
    expect(json.layerTypes.every((t) => t === 'full_attention')).toBe(true); // transformers' fallback
    expect(code).toBe(2);
    const noKv = json.diagnostics.find((d) => d.code === 'layers-without-kv-cache');
    expect(noKv?.severity).toBe('error');
    expect(noKv?.layers).not.toContain(4); // layer 4 is an attention layer (period 8, offset 4)
    expect(noKv?.layers).toContain(0);
  });

  it("gives the backend's exact nbits message", async () => {
    const folder = writeConfig('gemma', GEMMA_3_1B_IT.config);
    const { json } = await preflightJson(['--config', folder, '--nbits', '3', '--layer-policy', 'full-attention-only']);
    expect(json.diagnostics[0]!.message.split('\n')[0]).toBe('`nbits` for `quanto` backend has to be one of [`2`, `4`] but got 3');
  });

  it('prints a readable report without --json', async () => {
    const folder = writeConfig('gemma', GEMMA_3_1B_IT.config);
    const c = capture();
    expect(await runCli(['preflight', '--config', folder], c.io)).toBe(2);
    expect(c.out()).toContain('REFUSED');
    expect(c.out()).toContain('ERROR [unsupported-layer-types]');
    expect(c.out()).toMatch(/full_attention ×4/);
  });

  it('exits 1 with a clear message on a missing file, invalid JSON, a config without fields and a bad flag value', async () => {
    const missing = capture();
    expect(await runCli(['preflight', '--config', join(dir, 'nowhere')], missing.io)).toBe(1);
    expect(missing.err()).toMatch(/nowhere.*does not exist/);

    writeFileSync(join(dir, 'broken.json'), '{"num_hidden_layers": 4,, }');
    const broken = capture();
    expect(await runCli(['preflight', '--config', join(dir, 'broken.json')], broken.io)).toBe(1);
    expect(broken.err()).toMatch(/broken\.json/);
    expect(broken.err()).toMatch(/line 1/);

    writeFileSync(join(dir, 'empty.json'), '{"model_type": "llama"}');
    const empty = capture();
    expect(await runCli(['preflight', '--config', join(dir, 'empty.json')], empty.io)).toBe(1);
    expect(empty.err()).toMatch(/num_hidden_layers/);

    const badFlag = capture();
    expect(await runCli(['preflight', '--config', join(dir, 'empty.json'), '--nbits', 'four'], badFlag.io)).toBe(1);
    expect(badFlag.err()).toMatch(/--nbits must be an integer/);
    for (const text of [missing.err(), broken.err(), empty.err(), badFlag.err()]) expect(text).not.toMatch(/\n\s+at /);
  });
});

describe('kvscope preflight --context: the memory what-if (app/accounting, issue 26 point 4)', () => {
  const gemma = (): string => writeConfig('gemma', GEMMA_3_1B_IT.config);

  it('prints the table at each length, the numbers the workbench computes, with refusals and notes in words', async () => {
    const c = capture();
    const code = await runCli(['preflight', '--config', gemma(), '--layer-policy', 'full-attention-only', '--context', '4096,1048576', '--prompt-tokens', '1000'], c.io);
    expect(code).toBe(0);
    const config = modelConfigFromObject(structuredClone(GEMMA_3_1B_IT.config), 'config.json');
    const settings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, layerPolicy: 'full-attention-only' as const };
    const at = (contextLength: number, cacheMode: 'quantized' | 'dynamic') =>
      estimateKvMemory({ config, kvDtype: 'float16', cacheMode, settings, promptTokens: 1000, contextLength }).total.totalBytes;
    const lines = c.out().split('\n');
    expect(lines).toContain('Memory what-if (KV cache only, all layers, K and V in float16; a prompt of 1000 tokens, then one token a step):');
    const row = lines.find((line) => line.trim().startsWith('4,096 |'))!;
    expect(row.split('|').map((cell) => cell.trim()).slice(1, 3)).toEqual([formatBytes(at(4096, 'quantized')), formatBytes(at(4096, 'dynamic'))]);
    // 4096 − 1000 = 3096 decode steps at residual 128: 24 flushes, 24 left in the residual
    expect(row).toMatch(/\| +4072 \+ 24 \| 24$/);
    expect(c.out()).toMatch(/1,048,576 \|[^\n]*\n +note: 1048576 tokens is past this model's max_position_embeddings = 32768/);
  });

  it('--json carries every length; a refused length says why instead of a size; bad flags are refused with what to do', async () => {
    const folder = gemma();
    const c = capture();
    // group 48 over 1 KV head × 256: 96 tokens split (24,576 values), the flush at decode step 2 (98 tokens, 25,088) does not
    const args = ['--layer-policy', 'full-attention-only', '--group-size', '48', '--residual-length', '2', '--context', '96,100', '--prompt-tokens', '96', '--kv-dtype', 'float32', '--json'];
    expect(await runCli(['preflight', '--config', folder, ...args], c.io)).toBe(0);
    const whatIf = (JSON.parse(c.out()) as { whatIf: { contextLength: number; quantizedBytes: number | null; errors: string[]; kvDtype: string }[] }).whatIf;
    expect(whatIf.map((line) => [line.contextLength, line.kvDtype])).toEqual([[96, 'float32'], [100, 'float32']]);
    expect(whatIf[0]!.quantizedBytes).toBeGreaterThan(0);
    expect(whatIf[0]!.errors).toEqual([]);
    expect(whatIf[1]!.quantizedBytes).toBeNull();
    expect(whatIf[1]!.errors[0]).toMatch(/^These settings are refused at the flush of decode step 2 \(98 tokens\), so the cache never holds 100 tokens/);
    const text = capture();
    await runCli(['preflight', '--config', folder, ...args.slice(0, -1)], text.io);
    expect(text.out()).toMatch(/\n +100 \| refused: These settings are refused at the flush of decode step 2/);
    for (const [args, message] of [
      [['--context', '0'], /--context must be context lengths in tokens from 1 to 1048576/],
      [['--context', '2000000'], /--context must be context lengths in tokens from 1 to 1048576/],
      [['--context', '10', '--prompt-tokens', '11'], /--prompt-tokens must be from 1 to the shortest --context \(10\); got 11/],
      [['--context', '10', '--kv-dtype', 'bf16'], /kv-dtype/],
      [['--prompt-tokens', '5'], /--prompt-tokens sets the memory what-if, which --context asks for/],
    ] as const) {
      const bad = capture();
      expect(await runCli(['preflight', '--config', folder, ...args], bad.io), args.join(' ')).toBe(1);
      expect(bad.err(), args.join(' ')).toMatch(message);
    }
  });
});
