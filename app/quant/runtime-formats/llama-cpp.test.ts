import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { goldenPath, readNpyFile } from '../../node/golden.js';
import { firstBitMismatch, firstByteMismatch } from '../quanto/test-support/bits.js';
import { bestIndexInt8, IQ4_NL_VALUES } from './ggml-iq4-nl.js';
import { LLAMA_CPP_FORMATS } from './llama-cpp.js';
import { hadamardEntry, llamaRotationSize, rotateRows } from './llama-cpp-rotation.js';
import type { FormatGeometry, RuntimeFormat } from './types.js';
import { NO_TENSOR_PARAMS } from './types.js';

interface GoldenCase { case: string; type: string; shape: number[]; row_bytes: number; rel_fro_err: number }

const GOLDEN = goldenPath('runtime-formats', 'llama.cpp');
const present = existsSync(`${GOLDEN}/manifest.json`);
const cases: GoldenCase[] = present ? (JSON.parse(readFileSync(`${GOLDEN}/manifest.json`, 'utf8')) as { cases: GoldenCase[] }).cases : [];

function format(name: string): RuntimeFormat {
  const found = LLAMA_CPP_FORMATS.find((f) => f.name === name);
  if (found === undefined) throw new Error(`no format ${name}`);
  return found;
}

function geometry(headDim: number, side: 'key' | 'value' = 'key'): FormatGeometry {
  return { headDim, dtype: 'float32', side };
}

describe.skipIf(!present)(`ggml's golden vectors, bit for bit${present ? '' : ' (skipped: ../shared/golden/runtime-formats is absent)'}`, () => {
  it('covers six types on five cases', () => {
    expect(cases.length).toBe(30);
    expect(new Set(cases.map((c) => c.type))).toEqual(new Set(['q8_0', 'q4_0', 'q4_1', 'q5_0', 'q5_1', 'iq4_nl']));
  });

  for (const c of cases) {
    it(`${c.case} ${c.type}: blocks byte for byte, dequantized values bit for bit`, () => {
      const input = readNpyFile(`${GOLDEN}/${c.case}.input.npy`);
      const blocks = readNpyFile(`${GOLDEN}/${c.case}.${c.type}.blocks.npy`);
      const expected = readNpyFile(`${GOLDEN}/${c.case}.${c.type}.dequantized.npy`);
      const [, , rows, headDim] = c.shape as [number, number, number, number];
      const f = format(`llama.cpp:${c.type}`);
      const g = geometry(headDim);
      expect(f.refusal(g)).toBeNull();
      expect(f.rowBytes(g)).toBe(c.row_bytes);
      expect(blocks.shape).toEqual([rows, c.row_bytes]);

      const out = new Uint8Array(rows * c.row_bytes);
      f.encodeRows(input.data as Float32Array, rows, g, NO_TENSOR_PARAMS, out);
      const golden = (blocks.data as Uint8Array).slice();
      // iq4_nl packs an uninitialized index buffer for a block below GROUP_MAX_EPS (ggml-iq4-nl.ts):
      // there only d = 0 is defined; kvscope writes index 0, the golden file holds stack bytes.
      const undefinedBlocks = c.type === 'iq4_nl' ? zeroBlocks(input.data as Float32Array) : [];
      for (const block of undefinedBlocks) {
        expect([golden[block * 18], golden[block * 18 + 1]]).toEqual([0, 0]);
        expect(out.subarray(block * 18 + 2, block * 18 + 18).every((b) => b === 0)).toBe(true);
        golden.fill(0, block * 18 + 2, block * 18 + 18);
      }
      expect(undefinedBlocks.length).toBe(c.case === 'ties_zero_const_d128' && c.type === 'iq4_nl' ? 4 : 0);
      expect(firstByteMismatch(out, golden), 'blocks').toBeNull();

      // Dequantizing ggml's own blocks, and ours, gives ggml's values.
      const values = new Float32Array(rows * headDim);
      f.decodeRows(blocks.data as Uint8Array, rows, g, NO_TENSOR_PARAMS, values);
      expect(firstBitMismatch(values, expected.data as Float32Array), 'dequantized').toBeNull();
    });
  }
});

/** Blocks of 32 whose every |x| is below ggml's GROUP_MAX_EPS (1e-15). */
function zeroBlocks(x: Float32Array): number[] {
  const found: number[] = [];
  for (let b = 0; b < x.length / 32; b++) {
    if (x.subarray(b * 32, b * 32 + 32).every((v) => Math.abs(v) < 1e-15)) found.push(b);
  }
  return found;
}

describe('llama.cpp refusals', () => {
  it('refuses a head_dim that is not a multiple of 32 with llama.cpp\'s messages, current and older', () => {
    const f = format('llama.cpp:q4_0');
    expect(f.refusal(geometry(48))).toMatch(/^llama_init_from_model: K cache type q4_0 with block size 32 does not divide n_embd_head_k=48 \(older llama\.cpp: GGML_ASSERT\(hparams\.n_embd_head_k % ggml_blck_size\(type_k\) == 0\) failed\)\./);
    expect(f.refusal(geometry(8, 'value'))).toMatch(/^llama_init_from_model: V cache type q4_0 with block size 32 does not divide n_embd_head_v=8 \(older llama\.cpp: GGML_ASSERT\(hparams\.n_embd_head_v % ggml_blck_size\(type_v\) == 0\) failed\)/);
    expect(f.refusal(geometry(96))).toBeNull();
  });

  it('+rot is refused where llama.cpp does not rotate (head_dim not a multiple of 64)', () => {
    expect(format('llama.cpp:q8_0+rot').refusal(geometry(96))).toMatch(/only when n_embd_head_k % 64 == 0 .*Drop "\+rot"/);
    expect(format('llama.cpp:q8_0+rot').refusal(geometry(192))).toBeNull();
  });
});

describe('iq4_nl index search', () => {
  it('picks the nearest table level, ties going up, as best_index_int8 does', () => {
    for (let l = 0; l < 16; l++) expect(bestIndexInt8(IQ4_NL_VALUES[l]!)).toBe(l);
    for (let l = 1; l < 16; l++) {
      const mid = (IQ4_NL_VALUES[l - 1]! + IQ4_NL_VALUES[l]!) / 2;
      expect(bestIndexInt8(mid)).toBe(l);
      expect(bestIndexInt8(Math.fround(mid - 1e-3))).toBe(l - 1);
    }
    expect(bestIndexInt8(-1000)).toBe(0);
    expect(bestIndexInt8(1000)).toBe(15);
  });
});

describe('llama.cpp Hadamard rotation (PR #21038)', () => {
  it('uses the sizes llama.cpp picks: keys the largest power of two ≥ 64 dividing head_dim, values 64', () => {
    expect([64, 128, 192, 256, 320].map((d) => llamaRotationSize(d, 'key'))).toEqual([64, 128, 64, 256, 64]);
    expect([64, 128, 256].map((d) => llamaRotationSize(d, 'value'))).toEqual([64, 64, 64]);
    expect(llamaRotationSize(96, 'key')).toBeNull();
    expect(llamaRotationSize(32, 'value')).toBeNull();
  });

  it('multiplies by ggml_gen_hadamard\'s matrix (entries ±(float)(1/sqrtf(n)), Sylvester order)', () => {
    const n = 128;
    // ggml_gen_hadamard, written out as it builds the matrix.
    const h = new Float32Array(n * n);
    h[0] = hadamardEntry(n);
    for (let s = 1; s < n; s *= 2) {
      for (let i = 0; i < s; i++) {
        for (let j = 0; j < s; j++) {
          const v = h[i * n + j]!;
          h[(i + s) * n + j] = v;
          h[i * n + j + s] = v;
          h[(i + s) * n + j + s] = -v;
        }
      }
    }
    const x = new Float32Array(2 * n).map((_, i) => Math.fround(Math.sin(i * 1.7) * (i % 7)));
    const rotated = x.slice();
    rotateRows(rotated, 2, n, n, new Float64Array(n));
    for (let row = 0; row < 2; row++) {
      for (let i = 0; i < n; i++) {
        let sum = 0;
        for (let k = 0; k < n; k++) sum += h[i * n + k]! * x[row * n + k]!;
        expect(Math.abs(rotated[row * n + i]! - sum)).toBeLessThanOrEqual(Math.abs(sum) * 2 ** -22 + 1e-12);
      }
    }
  });

  it('stores rotated blocks and dequantizes back to the original basis', () => {
    const f = format('llama.cpp:q8_0+rot');
    const plain = format('llama.cpp:q8_0');
    const g = geometry(128);
    // An outlier channel: rotation spreads it, so the rotated q8_0 error is smaller.
    const rows = 8;
    const x = new Float32Array(rows * 128).map((_, i) => Math.fround(Math.cos(i * 0.37) + (i % 128 === 5 ? 40 : 0)));
    const bytes = new Uint8Array(rows * f.rowBytes(g));
    f.encodeRows(x, rows, g, NO_TENSOR_PARAMS, bytes);
    const rotated = x.slice();
    rotateRows(rotated, rows, 128, 128, new Float64Array(128));
    const direct = new Uint8Array(bytes.length);
    plain.encodeRows(rotated, rows, g, NO_TENSOR_PARAMS, direct);
    expect(firstByteMismatch(bytes, direct)).toBeNull();
    const back = new Float32Array(x.length);
    f.decodeRows(bytes, rows, g, NO_TENSOR_PARAMS, back);
    const plainBack = new Float32Array(x.length);
    const plainBytes = new Uint8Array(bytes.length);
    plain.encodeRows(x, rows, g, NO_TENSOR_PARAMS, plainBytes);
    plain.decodeRows(plainBytes, rows, g, NO_TENSOR_PARAMS, plainBack);
    const err = (y: Float32Array) => y.reduce((s, v, i) => s + (v - x[i]!) ** 2, 0);
    expect(err(back)).toBeLessThan(err(plainBack));
    expect(x.length).toBe(back.length);
  });
});
