import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { runCli } from './run-cli.js';
import { nodeCliIo } from './node-io.js';
import { hasShared, sharedDir } from '../../app/node/golden.js';
import type { CliIo } from '../../app/cli/io.js';
import { COMMAND_HELP } from './help.js';

function capture(): { io: CliIo; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { io: { ...nodeCliIo(), stdout: (t) => void (out += t), stderr: (t) => void (err += t) }, out: () => out, err: () => err };
}

interface PreflightJson { ok: boolean; diagnostics: { code: string; severity: string; message: string; layers: number[]; fix?: string }[] }

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'kvscope-extensions-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const stories = (): string => resolve(sharedDir(), 'models', 'stories260k');

async function preflight(args: string[]): Promise<{ code: number; json: PreflightJson; text: string; err: string }> {
  const c = capture();
  const code = await runCli(['preflight', '--config', stories(), ...args, '--json'], c.io);
  const t = capture();
  await runCli(['preflight', '--config', stories(), ...args], t.io);
  return { code, json: JSON.parse(c.out()) as PreflightJson, text: t.out(), err: c.err() };
}

describe.skipIf(!hasShared())('kvscope preflight with kvscope extensions', () => {
  it('checks each side\'s bits against the backend with transformers\' nbits message, naming the extension', async () => {
    const { code, json } = await preflight(['--nbits-key', '8', '--nbits-value', '4']);
    expect(code).toBe(2);
    const error = json.diagnostics.find((d) => d.code === 'invalid-nbits-key')!;
    expect(error.severity).toBe('error');
    expect(error.message).toContain('`nbits` for `quanto` backend has to be one of [`2`, `4`] but got 8');
    expect(error.message).toContain('kvscope extension --nbits-key');
    expect(json.diagnostics.some((d) => d.code === 'invalid-nbits-value')).toBe(false);
    const hqq = await preflight(['--backend', 'hqq', '--nbits-key', '8', '--nbits-value', '4']);
    expect(hqq.code).toBe(0);
    const note = hqq.json.diagnostics.find((d) => d.code === 'kvscope-extensions')!;
    expect(note.message).toMatch(/^kvscope extensions \(beyond transformers\), not transformers' QuantizedCache: K and V bits apart \(K 8 bits, V 4 bits\)/);
    expect(hqq.text).toContain('kvscope extensions (beyond transformers): K and V bits apart: K 8 bits, V 4 bits');
  });

  it('names no extension at neutral settings, and refuses values out of range with the fix', async () => {
    const neutral = await preflight(['--nbits-key', '4', '--nbits-value', '4', '--sink-tokens', '0']);
    expect(neutral.code).toBe(0);
    expect(neutral.json.diagnostics.some((d) => d.code === 'kvscope-extensions')).toBe(false);
    const bad = await preflight(['--outliers', '1.5', '--rotate-values', '--full-precision-first', '3', '--full-precision-last', '2']);
    expect(bad.code).toBe(2);
    expect(bad.json.diagnostics.map((d) => d.code)).toEqual(expect.arrayContaining(['invalid-outlier-quantile', 'invalid-rotation', 'invalid-full-precision-layers']));
    expect(bad.json.diagnostics.find((d) => d.code === 'invalid-rotation')!.fix).toBe('Add --rotate hadamard, or drop --rotate-values.');
  });

  it('checks shapes with the sink taken off: HQQ 4-bit axis 1 needs an even number of code rows', async () => {
    // stories260k: 4 heads × 8 dims; groups of 32 → one row of codes per token; 4-bit packing needs an even count
    const args = ['--backend', 'hqq', '--axis-key', '1', '--axis-value', '1', '--group-size', '32', '--residual-length', '16'];
    const plain = await preflight([...args, '--seq-len', '8']);
    expect(plain.code).toBe(0);
    const withSink = await preflight([...args, '--seq-len', '8', '--sink-tokens', '3']);
    expect(withSink.code).toBe(2);
    const error = withSink.json.diagnostics.find((d) => d.code === 'hqq-bitpack-rows')!;
    expect(error.message).toContain('the first 3 sink tokens left out');
  });

  it('reads a KVTuner preset, writes the resolved map back as KVTuner YAML, and refuses a map for another model', async () => {
    const preset = join(dir, 'preset.yaml');
    writeFileSync(preset, '0:\n  nbits_key: 8\n  nbits_value: 4\n3: full\n');
    const out = join(dir, 'resolved.yaml');
    const { code, json } = await preflight(['--backend', 'hqq', '--layer-map', preset, '--full-precision-last', '1', '--write-layer-map', out]);
    expect(code).toBe(0);
    expect(json.diagnostics.find((d) => d.code === 'kvscope-extensions')!.message).toContain('per-layer settings (0: K8 V4; full precision: 3)');
    const written = readFileSync(out, 'utf8');
    expect(written).toMatch(/^# kvscope layer map \(KVTuner preset format\)/);
    expect(written).toMatch(/^0:\n {2}nbits_key: 8\n {2}nbits_value: 4$/m);
    expect(parse(written)).toEqual({
      0: { nbits_key: 8, nbits_value: 4 }, 1: { nbits_key: 4, nbits_value: 4 }, 2: { nbits_key: 4, nbits_value: 4 }, 3: 'full', 4: 'full',
    });
    const json2 = join(dir, 'resolved.json');
    await preflight(['--layer-map', out, '--write-layer-map', json2]);
    expect(JSON.parse(readFileSync(json2, 'utf8'))).toEqual({ 0: { nbits_key: 8, nbits_value: 4 }, 1: { nbits_key: 4, nbits_value: 4 }, 2: { nbits_key: 4, nbits_value: 4 }, 3: 'full', 4: 'full' });
    writeFileSync(preset, '0: {nbits_key: 4, nbits_value: 2}\n31: {nbits_key: 4, nbits_value: 2}\n');
    const foreign = await preflight(['--layer-map', preset]);
    expect(foreign.code).toBe(2);
    expect(foreign.json.diagnostics.find((d) => d.code === 'invalid-layer-map')!.message).toContain('layer 31 does not exist: this model has layers 0…4');
  });

  it('reads a layer map\'s runtime formats (format_key/format_value), refuses llama.cpp on head_dim 8 with the layers, and writes FP8 layers back as formats', async () => {
    const map = join(dir, 'formats.yaml');
    writeFileSync(map, '0: {format_key: llama.cpp:q8_0, format_value: vllm:fp8_e4m3}\n2: {format_key: llama.cpp:q8_0, format_value: vllm:fp8_e4m3}\n');
    const refused = await preflight(['--group-size', '32', '--layer-map', map]);
    expect(refused.code).toBe(2);
    const refusal = refused.json.diagnostics.find((d) => d.code === 'kv-format-refused')!;
    expect(refusal.message).toContain('K cache type q8_0 with block size 32 does not divide n_embd_head_k=8');
    expect(refusal.message).toContain('--layer-map format_key (layers 0, 2) llama.cpp:q8_0');
    writeFileSync(map, '0: {format_key: vllm:fp8_e4m3, format_value: vllm:fp8_e5m2}\n1: {format_key: vllm:fp8_e4m3, nbits_value: full}\n');
    const out = join(dir, 'formats-resolved.yaml');
    const { code, json } = await preflight(['--group-size', '32', '--layer-map', map, '--write-layer-map', out]);
    expect(code).toBe(0);
    expect(json.diagnostics.find((d) => d.code === 'kvscope-extensions')!.message).toContain('0: K vllm:fp8_e4m3 V vllm:fp8_e5m2, 1: K vllm:fp8_e4m3 V full');
    const plan = {
      0: { format_key: 'vllm:fp8_e4m3', format_value: 'vllm:fp8_e5m2' }, 1: { format_key: 'vllm:fp8_e4m3', nbits_value: 'full' },
      2: { nbits_key: 4, nbits_value: 4 }, 3: { nbits_key: 4, nbits_value: 4 }, 4: { nbits_key: 4, nbits_value: 4 },
    };
    expect(parse(readFileSync(out, 'utf8'))).toEqual(plan);
    const again = join(dir, 'formats-again.json');
    expect((await preflight(['--group-size', '32', '--layer-map', out, '--write-layer-map', again])).code).toBe(0);
    expect(JSON.parse(readFileSync(again, 'utf8'))).toEqual(plan);
  });

  it('resolves the lab\'s targets into the cache plan and writes it back: keys-only layers with "nbits_value: full", which reads back as the same plan', async () => {
    const out = join(dir, 'targets.yaml');
    const { code, json } = await preflight(['--quantize-layers', '1,3', '--quantize-parts', 'key', '--write-layer-map', out]);
    expect(code).toBe(0);
    expect(json.diagnostics.find((d) => d.code === 'kvscope-extensions')!.message).toContain('per-layer settings (1: K4 V full, 3: K4 V full; full precision: 0, 2, 4)');
    const plan = { 0: 'full', 1: { nbits_key: 4, nbits_value: 'full' }, 2: 'full', 3: { nbits_key: 4, nbits_value: 'full' }, 4: 'full' };
    expect(parse(readFileSync(out, 'utf8'))).toEqual(plan);
    const again = join(dir, 'again.json');
    expect((await preflight(['--layer-map', out, '--write-layer-map', again])).code).toBe(0);
    expect(JSON.parse(readFileSync(again, 'utf8'))).toEqual(plan);
    const c = capture();
    expect(await runCli(['preflight', '--config', stories(), '--quantize-layers', '7'], c.io)).toBe(1);
    expect(c.err()).toContain('--quantize-layers names layer 7, but the model has layers 0…4.');
  });

  it('refuses an unreadable layer map as bad input, with what to write', async () => {
    const preset = join(dir, 'bad.yaml');
    writeFileSync(preset, '0: {nbits_key: 4}\n');
    const c = capture();
    expect(await runCli(['preflight', '--config', stories(), '--layer-map', preset], c.io)).toBe(1);
    expect(c.err()).toContain('layer 0: nbits_value must be an integer number of bits');
    writeFileSync(preset, 'layers: [');
    const d = capture();
    expect(await runCli(['preflight', '--config', stories(), '--layer-map', preset], d.io)).toBe(1);
    expect(d.err()).toContain('is not valid YAML or JSON');
  });

  it('refuses a rotation for an odd head_dim with the reason, and states the block of a non-power-of-two one', async () => {
    const folder = join(dir, 'odd');
    mkdirSync(folder);
    const config = { model_type: 'llama', num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, hidden_size: 4 * 63, head_dim: 63, vocab_size: 32 };
    writeFileSync(join(folder, 'config.json'), JSON.stringify(config));
    const c = capture();
    expect(await runCli(['preflight', '--config', folder, '--rotate', 'hadamard', '--group-size', '7', '--json'], c.io)).toBe(2);
    const json = JSON.parse(c.out()) as PreflightJson;
    expect(json.diagnostics.find((d) => d.code === 'invalid-rotation')!.message).toContain('head_dim 63 is odd');
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ ...config, hidden_size: 320, head_dim: 80 }));
    const e = capture();
    expect(await runCli(['preflight', '--config', folder, '--rotate', 'hadamard', '--rotate-values', '--json'], e.io)).toBe(0);
    const notes = (JSON.parse(e.out()) as PreflightJson).diagnostics.filter((d) => d.code === 'rotation-block-diagonal');
    expect(notes.map((d) => d.message)).toEqual([
      expect.stringContaining('(keys): head_dim 80 is not a power of two, so the rotation is block-diagonal, 5 blocks of 16'),
      expect.stringContaining('(values)'),
    ]);
  });
});

describe('kvscope run with extensions', () => {
  it('refuses extension flags with --cache dynamic, as it refuses the other cache flags', async () => {
    const c = capture();
    expect(await runCli(['run', '--model', 'synthetic', '--cache', 'dynamic', '--sink-tokens', '4'], c.io)).toBe(1);
    expect(c.err()).toContain('--sink-tokens configures the quantized cache; it has no effect with --cache dynamic');
  });

  it('names them as kvscope extensions in the help of run, preflight and eval', () => {
    for (const command of ['run', 'preflight', 'eval']) {
      const help = COMMAND_HELP[command]!;
      expect(help).toMatch(/kvscope extensions (\(beyond transformers|beyond transformers)/);
      for (const flag of ['--nbits-key', '--nbits-value', '--layer-map', '--full-precision-first', '--full-precision-last', '--sink-tokens', '--rotate hadamard', '--rotate-values', '--outliers']) {
        expect(help).toContain(flag);
      }
    }
  });
});
