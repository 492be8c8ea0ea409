import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './run-cli.js';
import { nodeCliIo } from './node-io.js';
import { parseNpy, serializeNpy } from '../../app/npy/npy.js';
import { goldenPath, hasShared } from '../../app/node/golden.js';
import { float32ToFloat16Bits } from '../../app/tensor/float16.js';
import type { CliIo } from '../../app/cli/io.js';

interface Captured { io: CliIo; out: () => string; err: () => string }

function capture(): Captured {
  let out = '';
  let err = '';
  const io: CliIo = { ...nodeCliIo(), stdout: (t) => void (out += t), stderr: (t) => void (err += t) };
  return { io, out: () => out, err: () => err };
}

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'kvscope-cli-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('kvscope CLI: general', () => {
  it('prints help, version, and refuses unknown commands and flags without a stack trace', async () => {
    const help = capture();
    expect(await runCli(['--help'], help.io)).toBe(0);
    expect(help.out()).toContain('kvscope preflight');
    const version = capture();
    expect(await runCli(['--version'], version.io)).toBe(0);
    expect(version.out()).toMatch(/^kvscope \d+\.\d+\.\d+/);
    const unknown = capture();
    expect(await runCli(['frobnicate'], unknown.io)).toBe(1);
    expect(unknown.err()).toContain('unknown command "frobnicate"');
    const badFlag = capture();
    expect(await runCli(['quantize', '--bogus', '1'], badFlag.io)).toBe(1);
    expect(badFlag.err()).toMatch(/Unknown option '--bogus'/);
    expect(badFlag.err()).not.toMatch(/\n\s+at /);
  });
});

describe('kvscope quantize', () => {
  it.skipIf(!hasShared())('reproduces the golden quanto case and writes codes, scale and zero in the golden layout', async () => {
    const c = capture();
    const args = ['quantize', '--backend', 'quanto', '--nbits', '4', '--axis', '0', '--group-size', '64',
      '--input', goldenPath('inputs', 'kv_a.npy'), '--dequantized', join(dir, 'deq.npy'),
      '--codes', join(dir, 'codes.npy'), '--scale', join(dir, 'scale.npy'), '--zero', join(dir, 'zero.npy'), '--json'];
    expect(await runCli(args, c.io)).toBe(0);
    const report = JSON.parse(c.out()) as Record<string, number>;
    const golden = JSON.parse(readFileSync(goldenPath('manifest.json'), 'utf8')) as { cases: { id: string; rel_fro_err: number; max_abs_err: number; mean_abs_err: number }[] };
    const expected = golden.cases.find((x) => x.id === 'quanto_kv_a_b4_ax0_g64')!;
    expect(report['rel_fro_err']).toBeCloseTo(expected.rel_fro_err, 12);
    expect(report['max_abs_err']).toBeCloseTo(expected.max_abs_err, 12);
    expect(report['mean_abs_err']).toBeCloseTo(expected.mean_abs_err, 12);
    // int4, group 64, float32 scale and shift: 4 + 2·32/64 = 5 bits per value
    expect(report['bits_per_value']).toBe(5);
    for (const name of ['deq', 'codes', 'scale', 'zero']) {
      const mine = readFileSync(join(dir, `${name}.npy`));
      const theirs = readFileSync(goldenPath('cases', 'quanto_kv_a_b4_ax0_g64', `${name}.npy`));
      expect(mine.equals(theirs), `${name}.npy byte-identical to the golden file`).toBe(true);
    }
  });

  it.skipIf(!hasShared())('keeps a float16 input float16 and reports the fp16 storage cost', async () => {
    const input = parseNpy(readFileSync(goldenPath('inputs', 'kv_a.npy')));
    const f32 = input.data as Float32Array;
    const bits = float32ToFloat16Bits(f32);
    writeFileSync(join(dir, 'k16.npy'), serializeNpy({ dtype: 'float16', shape: input.shape, data: bits }));
    const c = capture();
    expect(await runCli(['quantize', '--backend', 'hqq', '--nbits', '4', '--axis', '1', '--group-size', '64',
      '--input', join(dir, 'k16.npy'), '--dequantized', join(dir, 'out.npy'), '--json'], c.io)).toBe(0);
    const out = parseNpy(readFileSync(join(dir, 'out.npy')));
    expect(out.dtype).toBe('float16');
    expect(out.shape).toEqual([1, 4, 128, 64]);
    const report = JSON.parse(c.out()) as Record<string, number>;
    // int4, group 64, fp16 scale and zero: 4 + 2·16/64 = 4.5 bits per value (spec §3.6)
    expect(report['bits_per_value']).toBe(4.5);
    expect(report['rel_fro_err']).toBeGreaterThan(0.01);
    expect(report['rel_fro_err']).toBeLessThan(0.2);
  });

  it.skipIf(!hasShared())('refuses a shape the library refuses with its message, exit 1, and writes nothing', async () => {
    const c = capture();
    const code = await runCli(['quantize', '--backend', 'quanto', '--nbits', '2', '--axis', '-1', '--group-size', '64',
      '--input', goldenPath('inputs', 'kv_c.npy'), '--dequantized', join(dir, 'deq.npy')], c.io);
    expect(code).toBe(1);
    expect(c.err()).toContain('Group size (64) must be a divisor of (200)');
    expect(c.err()).not.toMatch(/\n\s+at /);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('gives a clear message for a missing file, a non-.npy file, an integer dtype and a 2-D array', async () => {
    const cases: [string, Uint8Array | null, RegExp][] = [
      ['missing.npy', null, /missing\.npy does not exist/],
      ['notes.txt', new TextEncoder().encode('hi'), /is not a \.npy file/],
      ['fake.npy', new TextEncoder().encode('not numpy at all'), /is not a NumPy \.npy file/],
      ['ints.npy', serializeNpy({ dtype: 'int32', shape: [1, 1, 2, 2], data: new Int32Array(4) }), /holds int32 values/],
      ['flat.npy', serializeNpy({ dtype: 'float32', shape: [128, 64], data: new Float32Array(128 * 64) }), /x\.reshape\(1, 1, 128, 64\)/],
    ];
    for (const [name, bytes, pattern] of cases) {
      if (bytes) writeFileSync(join(dir, name), bytes);
      const c = capture();
      const code = await runCli(['quantize', '--backend', 'quanto', '--nbits', '4', '--axis', '0', '--group-size', '64',
        '--input', join(dir, name), '--dequantized', join(dir, 'o.npy')], c.io);
      expect(code, name).toBe(1);
      expect(c.err(), name).toMatch(pattern);
      expect(existsSync(join(dir, 'o.npy'))).toBe(false);
    }
  });

  it('refuses a NaN input with a clear error', async () => {
    const data = new Float32Array(64 * 4).fill(0.5);
    data[17] = NaN;
    writeFileSync(join(dir, 'nan.npy'), serializeNpy({ dtype: 'float32', shape: [1, 1, 4, 64], data }));
    for (const backend of ['quanto', 'hqq']) {
      const c = capture();
      const code = await runCli(['quantize', '--backend', backend, '--nbits', '4', '--axis', '0', '--group-size', '64',
        '--input', join(dir, 'nan.npy'), '--dequantized', join(dir, 'o.npy')], c.io);
      expect(code).toBe(1);
      expect(c.err()).toMatch(/NaN/);
    }
  });

  it('requires its flags', async () => {
    const c = capture();
    expect(await runCli(['quantize', '--backend', 'quanto'], c.io)).toBe(1);
    expect(c.err()).toMatch(/--nbits is required/);
    const d = capture();
    expect(await runCli(['quantize', '--backend', 'int8', '--nbits', '4', '--axis', '0', '--group-size', '64', '--input', 'x.npy', '--dequantized', 'y.npy'], d.io)).toBe(1);
    expect(d.err()).toMatch(/--backend must be one of quanto, hqq/);
  });
});

