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
