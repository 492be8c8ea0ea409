import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../app/cli/io.js';
import { goldenPath } from '../../app/node/golden.js';
import { parseNpy, serializeNpy, type NpyArray } from '../../app/npy/npy.js';
import { numberToFloat16Bits, roundToFloat16 } from '../../app/tensor/float16.js';
import { runCli } from './run-cli.js';

/** An in-memory terminal and file system for `kvscope quantize --format` (files as bytes by path). */
function memoryIo(files: Record<string, Uint8Array> = {}): CliIo & { out: string; err: string; files: Map<string, Uint8Array> } {
  const io = {
    out: '', err: '', files: new Map(Object.entries(files)),
    readFile: (path: string) => {
      const bytes = io.files.get(path);
      if (bytes === undefined) throw new Error(`${path} does not exist.`);
      return bytes;
    },
    readTextFile: () => { throw new Error('not used'); },
    isDirectory: () => false,
    joinPath: (...parts: string[]) => parts.join('/'),
    writeFileAtomic: (path: string, bytes: Uint8Array) => void io.files.set(path, bytes),
    stdout: (text: string) => void (io.out += text),
    stderr: (text: string) => void (io.err += text),
  };
  return io;
}

function npy(array: NpyArray): Uint8Array {
  return serializeNpy(array);
}

function tensor(shape: [number, number, number, number], at: (i: number) => number): Float32Array {
  return Float32Array.from({ length: shape.reduce((a, b) => a * b) }, (_, i) => Math.fround(at(i)));
}

const GOLDEN = goldenPath('runtime-formats', 'llama.cpp');
const golden = existsSync(`${GOLDEN}/manifest.json`);

describe('kvscope quantize --format (a kvscope extension)', () => {
  it.skipIf(!golden)('llama.cpp:q4_0 writes ggml\'s own blocks and values, and reports the manifest\'s error', async () => {
    const manifest = JSON.parse(readFileSync(`${GOLDEN}/manifest.json`, 'utf8')) as { cases: { case: string; type: string; rel_fro_err: number }[] };
    const io = memoryIo({ 'x.npy': readFileSync(`${GOLDEN}/gauss_d128.input.npy`) });
    const code = await runCli(['quantize', '--format', 'llama.cpp:q4_0', '--input', 'x.npy', '--dequantized', 'y.npy', '--blocks', 'b.npy', '--json'], io);
    expect(io.err).toBe('');
    expect(code).toBe(0);
    const blocks = parseNpy(io.files.get('b.npy')!);
    const expected = parseNpy(readFileSync(`${GOLDEN}/gauss_d128.q4_0.blocks.npy`));
    expect(blocks.dtype).toBe('uint8');
    expect(blocks.shape).toEqual([64, 72]);
    expect(Buffer.from(blocks.data as Uint8Array).equals(Buffer.from(expected.data as Uint8Array))).toBe(true);
    const values = parseNpy(io.files.get('y.npy')!);
    const goldenValues = parseNpy(readFileSync(`${GOLDEN}/gauss_d128.q4_0.dequantized.npy`));
    expect(values.shape).toEqual([1, 1, 64, 128]);
    expect([...(values.data as Float32Array)]).toEqual([...(goldenValues.data as Float32Array)]);
    const json = JSON.parse(io.out) as Record<string, unknown>;
    const reference = manifest.cases.find((c) => c.case === 'gauss_d128' && c.type === 'q4_0')!.rel_fro_err;
    expect(json['rel_fro_err'] as number).toBeCloseTo(reference, 6);
    expect(json).toMatchObject({ format: 'llama.cpp:q4_0', runtime: 'llama.cpp', kvscope_extension: true, row_bytes: 72, bits_per_value: 4.5, tensor_scale: null, side: 'key' });
  });

  it('vllm:fp8_e4m3 --calculate-kv-scales on values: scale = amax / 100, one byte per value plus the fp32 scale', async () => {
    const x = tensor([1, 2, 3, 16], (i) => Math.sin(i) * 5);
    const io = memoryIo({ 'v.npy': npy({ dtype: 'float32', shape: [1, 2, 3, 16], data: x }) });
    const code = await runCli(['quantize', '--format', 'vllm:fp8_e4m3', '--side', 'value', '--calculate-kv-scales', '--input', 'v.npy', '--dequantized', 'y.npy', '--blocks', 'b.npy', '--json'], io);
    expect(code).toBe(0);
    const json = JSON.parse(io.out) as Record<string, number>;
    const amax = Math.max(...x.map(Math.abs));
    expect(json['tensor_scale']).toBe(Math.fround(amax / 100));
    expect(json['quantized_bytes']).toBe(96 + 4);
    expect(parseNpy(io.files.get('b.npy')!).shape).toEqual([6, 16]);
    expect(json['rel_fro_err']).toBeGreaterThan(0);
    expect(json['rel_fro_err']).toBeLessThan(0.05);
  });

  it('a float16 tensor comes back float16, and the text report names the runtime and the extension', async () => {
    const x = tensor([1, 1, 4, 64], (i) => roundToFloat16(Math.cos(i * 0.3)));
    const bits = Uint16Array.from(x, (v) => numberToFloat16Bits(v));
    const io = memoryIo({ 'k.npy': npy({ dtype: 'float16', shape: [1, 1, 4, 64], data: bits }) });
    expect(await runCli(['quantize', '--format', 'mlx:4bit-g64', '--input', 'k.npy', '--dequantized', 'y.npy'], io)).toBe(0);
    expect(parseNpy(io.files.get('y.npy')!).dtype).toBe('float16');
    expect(io.out).toMatch(/^mlx:4bit-g64 \(MLX \(mlx-lm\); a kvscope extension\) on \[1, 1, 4, 64\] float16, keys\n/);
    expect(io.out).toMatch(/bits_per_value 4\.500 \(36 bytes per head vector/);
  });

  it('refuses a head_dim llama.cpp refuses, with its assertion, and writes nothing', async () => {
    const io = memoryIo({ 'x.npy': npy({ dtype: 'float32', shape: [1, 1, 2, 48], data: new Float32Array(96) }) });
    expect(await runCli(['quantize', '--format', 'llama.cpp:q8_0', '--input', 'x.npy', '--dequantized', 'y.npy', '--blocks', 'b.npy'], io)).toBe(1);
    expect(io.err).toMatch(/^kvscope quantize: llama\.cpp:q8_0 refuses this tensor: llama_init_from_model: K cache type q8_0 with block size 32 does not divide n_embd_head_k=48 \(older llama\.cpp: GGML_ASSERT\(hparams\.n_embd_head_k % ggml_blck_size\(type_k\) == 0\) failed\)/);
    expect([...io.files.keys()]).toEqual(['x.npy']);
  });

  it('names the formats when one is unknown, and refuses flags of the other path', async () => {
    const io = memoryIo();
    expect(await runCli(['quantize', '--format', 'vllm:int8', '--input', 'x.npy', '--dequantized', 'y.npy'], io)).toBe(1);
    expect(io.err).toMatch(/--format: unknown KV format "vllm:int8"\. Formats: llama\.cpp:q8_0, .*nvfp4, mlx:2bit-g32, .*ort-webgpu:q8, ort-webgpu:q4\./);
    const clash = memoryIo();
    expect(await runCli(['quantize', '--format', 'nvfp4', '--nbits', '4', '--input', 'x.npy', '--dequantized', 'y.npy'], clash)).toBe(1);
    expect(clash.err).toMatch(/drop --nbits/);
    const calc = memoryIo();
    expect(await runCli(['quantize', '--format', 'llama.cpp:q4_0', '--calculate-kv-scales', '--input', 'x.npy', '--dequantized', 'y.npy'], calc)).toBe(1);
    expect(calc.err).toMatch(/--calculate-kv-scales is vLLM's per-tensor FP8 scale; llama\.cpp:q4_0 has no per-tensor scale/);
    const stray = memoryIo();
    expect(await runCli(['quantize', '--backend', 'quanto', '--nbits', '4', '--axis', '0', '--group-size', '64', '--blocks', 'b.npy', '--input', 'x.npy', '--dequantized', 'y.npy'], stray)).toBe(1);
    expect(stray.err).toMatch(/--blocks belong to --format/);
  });

  it('--help lists every format family and calls them a kvscope extension', async () => {
    const io = memoryIo();
    expect(await runCli(['quantize', '--help'], io)).toBe(0);
    expect(io.out).toMatch(/Serving runtimes' KV formats \(a kvscope extension, not transformers' cache\)/);
    for (const name of ['llama.cpp:q8_0', 'llama.cpp:q4_0', 'llama.cpp:q4_1', 'llama.cpp:q5_0', 'llama.cpp:q5_1', 'llama.cpp:iq4_nl',
      'llama.cpp:<type>+rot', 'vllm:fp8_e4m3', 'vllm:fp8_e5m2', 'nvfp4', 'mlx:<2|3|4|6|8>bit-g<32|64|128>', 'ort-webgpu:q8', 'ort-webgpu:q4']) {
      expect(io.out).toContain(`  ${name}`);
    }
  });
});
