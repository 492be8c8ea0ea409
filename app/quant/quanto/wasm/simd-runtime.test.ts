import { describe, expect, it } from 'vitest';
import type { KvDtype, KvShape } from '../../../tensor/kv-tensor.js';
import { groupLayout } from '../grouping.js';
import { roundToFloat16 } from '../../../tensor/float16.js';
import type { QuantoCodes } from '../quanto-codes.js';
import { dequantizeColumnsScalar, dequantizeRowsScalar, dequantTable } from '../scalar-dequantize.js';
import { quantizeColumnsScalar, quantizeRowsScalar } from '../scalar-quantize.js';
import { firstBitMismatch, firstByteMismatch } from '../test-support/bits.js';
import { normalTensor, seededRandom } from '../test-support/random.js';
import { simdKernels, type SimdKernels } from './simd-runtime.js';

/**
 * The SIMD kernels are a fast path only: for every layout they accept, they must give exactly the
 * plain kernels' bits (which the golden vectors pin to the library).
 */
function kernels(): SimdKernels {
  const k = simdKernels();
  if (k === null) throw new Error('WebAssembly SIMD is not available');
  return k;
}

function scalar(
  x: Float32Array, dtype: KvDtype, shape: KvShape, axis: 0 | -1, g: number, bits: number,
): { codes: QuantoCodes | null; out: Float32Array } {
  const layout = groupLayout(shape, axis, g);
  const round = dtype === 'float16' ? roundToFloat16 : Math.fround;
  const codes = layout.paramsPerColumn ? quantizeColumnsScalar(x, layout, bits, round) : quantizeRowsScalar(x, layout, bits, round);
  const out = new Float32Array(x.length);
  if (codes !== null) {
    const table = dequantTable(codes.scale, codes.shift, bits, round);
    if (layout.paramsPerColumn) dequantizeColumnsScalar(codes.packed, table, layout, bits, out);
    else dequantizeRowsScalar(codes.packed, table, layout, bits, out);
  }
  return { codes, out };
}

function expectSameAsScalar(x: Float32Array, shape: KvShape, axis: 0 | -1, g: number, bits: number, dtype: KvDtype = 'float32'): void {
  const layout = groupLayout(shape, axis, g);
  const k = kernels();
  expect(k.supports(layout)).toBe(true);
  const fast = k.quantize(x, dtype, layout, bits);
  const plain = scalar(x, dtype, shape, axis, g, bits);
  expect(fast).not.toBeNull();
  expect(plain.codes).not.toBeNull();
  const label = `[${shape.join(',')}] ${dtype} axis ${axis} g ${g} int${bits}`;
  expect(firstByteMismatch(fast!.packed, plain.codes!.packed), `${label} packed`).toBeNull();
  expect(firstBitMismatch(fast!.scale, plain.codes!.scale), `${label} scale`).toBeNull();
  expect(firstBitMismatch(fast!.shift, plain.codes!.shift), `${label} shift`).toBeNull();
  const out = new Float32Array(x.length).fill(Number.NaN);
  k.dequantize(fast!.packed, fast!.scale, fast!.shift, dtype, layout, bits, out);
  expect(firstBitMismatch(out, plain.out), `${label} dequantized`).toBeNull();
}

/** Normal values with planted constant groups, exact zeros of both signs, ties and tiny ranges. */
function awkwardTensor(count: number, seed: number): Float32Array {
  const x = normalTensor(count, seed);
  const random = seededRandom(seed + 1);
  for (let i = 0; i < count; i++) {
    const r = random();
    if (r < 0.02) x[i] = 0;
    else if (r < 0.04) x[i] = -0;
    else if (r < 0.06) x[i] = Math.round(x[i]! * 4) / 4; // many exact quarter steps: ties after scaling
    else if (r < 0.07) x[i] = 1e-41 * x[i]!; // subnormal
  }
  for (let i = 0; i < Math.min(count, 64); i++) x[i] = 0.75; // a constant run at the start
  return x;
}

describe('WebAssembly SIMD quanto kernels', () => {
  it('are available in Node 20 (otherwise every other test here would test nothing)', () => {
    expect(simdKernels()).not.toBeNull();
  });

  it('accept axis 0 when g is a multiple of 16 and axis -1 when head_dim is a multiple of 4', () => {
    const k = kernels();
    expect(k.supports(groupLayout([1, 2, 8, 64], 0, 32))).toBe(true);
    expect(k.supports(groupLayout([1, 2, 8, 64], 0, 8))).toBe(false);
    expect(k.supports(groupLayout([1, 2, 12, 64], 0, 24))).toBe(false);
    expect(k.supports(groupLayout([1, 2, 8, 64], -1, 4))).toBe(true);
    expect(k.supports(groupLayout([1, 2, 8, 6], -1, 4))).toBe(false);
    expect(k.supports(groupLayout([1, 1, 1, 16], 0, 16))).toBe(true); // one group: a column layout with 16 channels
  });

  const layouts: [KvShape, 0 | -1, number][] = [
    [[1, 8, 128, 128], 0, 64],
    [[1, 2, 100, 128], 0, 32],
    [[2, 3, 37, 16], 0, 16], // rows = 222: odd packed-row split at 4 bits, rows % 4 ≠ 0 at 2 bits
    [[1, 4, 33, 80], 0, 48], // head_dim 80 (Phi-2 style), groups straddle tokens
    [[1, 1, 3, 16], 0, 48], // one group
    [[1, 8, 128, 128], -1, 64], // A = 16: quads only
    [[1, 2, 95, 64], -1, 10], // A = 19: four quads and 3 single blocks
    [[2, 3, 5, 16], -1, 6], // A = 5
    [[1, 1, 48, 20], -1, 16], // A = 3: single blocks only
    [[1, 3, 35, 80], -1, 7], // g = 7: packed rows ragged at both widths; A = 15
    [[1, 1, 2, 8], -1, 2], // tiny
    [[1, 3, 2048, 64], -1, 16], // several chunks of 64 blocks
    [[1, 8, 512, 128], 0, 16], // several chunks; a chunk boundary falls on a bit-slot boundary
    [[1, 5, 1001, 64], 0, 16], // 20020 groups: chunks of 16384 groups cut at rowDim 10010 (4 bits) / 5005 (2 bits)
    [[1, 3, 1000, 64], -1, 8], // A = 375 in one chunk: 93 quads, then 3 single blocks
  ];
  for (const [shape, axis, g] of layouts) {
    it(`give the plain kernels' bits: [${shape.join(', ')}] axis ${axis} g ${g}`, () => {
      const x = awkwardTensor(shape[0] * shape[1] * shape[2] * shape[3], shape[2] * 31 + g);
      for (const bits of [2, 4]) expectSameAsScalar(x, shape, axis, g, bits);
      // float16: half values (subnormals, ±0 and ties included) and their per-op half rounding
      const half = x.map((v, i) => roundToFloat16(i % 97 === 0 ? v * 8e3 : i % 89 === 0 ? v * 1e-6 : v));
      for (const bits of [2, 4]) expectSameAsScalar(half, shape, axis, g, bits, 'float16');
    });
  }

  it('float16: half ranges that overflow, underflow to subnormal scales, and constant groups', () => {
    const shape: KvShape = [1, 2, 16, 16];
    const x = new Float32Array(512);
    for (let i = 0; i < 512; i++) {
      const group = Math.floor(i / 16);
      x[i] = group % 5 === 0 ? 1000 // constant
        : group % 5 === 1 ? (i % 2 ? 65504 : -65504) // max − min overflows to Inf
          : group % 5 === 2 ? (i % 3) * 2 ** -24 // subnormal range: scale rounds to 0
            : group % 5 === 3 ? roundToFloat16(1e-3 + (i % 16) * 4.7e-5) // scale and x − min in [2^-15, 2^-14): half subnormals
              : roundToFloat16(Math.sin(i) * 2 ** (group % 7));
    }
    for (const axis of [0, -1] as const) for (const bits of [2, 4]) expectSameAsScalar(x, shape, axis, 16, bits, 'float16');
  });

  it('keep working when the module memory grows and when a later tensor is smaller', () => {
    const small: KvShape = [1, 1, 16, 16];
    const large: KvShape = [1, 8, 1024, 128];
    expectSameAsScalar(normalTensor(256, 1), small, 0, 16, 4);
    expectSameAsScalar(normalTensor(8 * 1024 * 128, 2), large, -1, 32, 4);
    expectSameAsScalar(normalTensor(256, 3), small, -1, 16, 2);
    expectSameAsScalar(normalTensor(8 * 1024 * 128, 4), large, 0, 128, 2);
  });

  it('report NaN and ±Inf wherever they sit: any lane, any vector, a quad or a single tail block', () => {
    const k = kernels();
    const cases: [KvShape, 0 | -1, number][] = [[[1, 2, 8, 64], 0, 64], [[1, 2, 95, 64], -1, 10], [[1, 1, 16, 4], -1, 16]];
    for (const [shape, axis, g] of cases) {
      const layout = groupLayout(shape, axis, g);
      const n = shape[0] * shape[1] * shape[2] * shape[3];
      const random = seededRandom(n);
      const positions = [0, 1, 2, 3, 5, 17, n - 1, Math.floor(n / 2), ...Array.from({ length: 20 }, () => Math.floor(random() * n))];
      for (const position of positions) {
        for (const bad of [Number.NaN, Infinity, -Infinity]) {
          const x = normalTensor(n, 8);
          x[position] = bad;
          for (const dtype of ['float32', 'float16'] as const) {
            expect(k.quantize(x, dtype, layout, 4), `${bad} at ${position} of [${shape.join(',')}] axis ${axis} ${dtype}`).toBeNull();
          }
        }
      }
      expect(k.quantize(normalTensor(n, 8), 'float32', layout, 4)).not.toBeNull();
      expect(k.quantize(normalTensor(n, 8).map(roundToFloat16), 'float16', layout, 4)).not.toBeNull();
    }
  });
});
