import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { QuantizationError } from '../../errors.js';
import { goldenPath, hasShared, readNpyFile } from '../../node/golden.js';
import { kvTensor, type KvDtype, type KvShape } from '../../tensor/kv-tensor.js';
import type { QuantizedTensor } from '../types.js';
import { groupLayout } from './grouping.js';
import { unpackWeights } from './packing.js';
import { quantoQuantizer } from './quanto.js';
import { dequantizeColumnsScalar, dequantizeRowsScalar, dequantTable } from './scalar-dequantize.js';
import { quantizeColumnsScalar, quantizeRowsScalar } from './scalar-quantize.js';
import { firstBitMismatch, firstByteMismatch } from './test-support/bits.js';
import { halfByTable, halfValue } from './test-support/half-table.js';
import { normalTensor, seededRandom } from './test-support/random.js';
import { referenceQuanto } from './test-support/reference-quanto.js';

interface GoldenFile { file: string; shape: number[] }
interface GoldenCase {
  id: string;
  backend: string;
  input: string;
  input_shape: number[];
  params: { nbits: number; axis: number; group_size: number };
  files: { packed: GoldenFile; codes: GoldenFile; scale: GoldenFile; zero: GoldenFile; deq: GoldenFile };
}
interface GoldenErrorCase { id: string; backend: string; input_shape: number[]; params: GoldenCase['params']; error: string }
interface Manifest { cases: GoldenCase[]; error_cases: GoldenErrorCase[] }

const SHARED = hasShared();
const manifest: Manifest | null = SHARED ? (JSON.parse(readFileSync(goldenPath('manifest.json'), 'utf8')) as Manifest) : null;
const quantoCases = manifest?.cases.filter((c) => c.backend === 'quanto') ?? [];
const quantoErrors = manifest?.error_cases.filter((c) => c.backend === 'quanto') ?? [];

function npy<T extends Float32Array | Uint8Array>(file: string): { data: T; shape: readonly number[] } {
  const array = readNpyFile(goldenPath(file));
  return { data: array.data as T, shape: array.shape };
}

function asShape(s: readonly number[]): KvShape {
  return [s[0]!, s[1]!, s[2]!, s[3]!];
}

/** Runs the plain typed-array kernels directly, bypassing the SIMD dispatch in quanto.ts. */
function scalarRoundTrip(x: Float32Array, shape: KvShape, bits: 2 | 4, axis: 0 | -1, g: number, round: (v: number) => number) {
  const layout = groupLayout(shape, axis, g);
  const codes = layout.paramsPerColumn
    ? quantizeColumnsScalar(x, layout, bits, round)
    : quantizeRowsScalar(x, layout, bits, round);
  if (codes === null) throw new Error('unexpected non-finite input');
  const out = new Float32Array(x.length);
  const table = dequantTable(codes.scale, codes.shift, bits, round);
  if (layout.paramsPerColumn) dequantizeColumnsScalar(codes.packed, table, layout, bits, out);
  else dequantizeRowsScalar(codes.packed, table, layout, bits, out);
  return { ...codes, dequantized: out };
}

/** Every field of a quantized tensor (and its dequantization) against a reference, bit for bit. */
function expectMatchesReference(
  q: QuantizedTensor,
  dequantized: Float32Array,
  expected: { gridShape: readonly number[]; paramShape: readonly number[]; codes: Uint8Array; packed: Uint8Array; scale: Float32Array; shift: Float32Array; dequantized: Float32Array },
): void {
  expect(q.gridShape).toEqual(expected.gridShape);
  expect(q.paramShape).toEqual(expected.paramShape);
  expect(firstByteMismatch(quantoQuantizer.unpackCodes(q), expected.codes), 'codes').toBeNull();
  expect(firstByteMismatch(q.packed, expected.packed), 'packed').toBeNull();
  expect(firstBitMismatch(q.scale, expected.scale), 'scale').toBeNull();
  expect(firstBitMismatch(q.zero, expected.shift), 'shift').toBeNull();
  expect(firstBitMismatch(dequantized, expected.dequantized), 'dequantized').toBeNull();
}

function quantizeAndCompareWithReference(x: Float32Array, shape: KvShape, dtype: KvDtype, bits: 2 | 4, axis: 0 | -1, g: number): void {
  const round = dtype === 'float16' ? halfByTable : Math.fround;
  const q = quantoQuantizer.quantize(kvTensor(shape, dtype, x), { nbits: bits, axis, groupSize: g });
  const dequantized = quantoQuantizer.dequantize(q).data;
  expectMatchesReference(q, dequantized, referenceQuanto(x, shape, bits, axis, g, round));
}

describe.skipIf(!SHARED)(`quanto golden parity${SHARED ? '' : ' (skipped: ../shared/golden is absent)'}`, () => {
  it('covers every quanto case and error case of the manifest', () => {
    expect(quantoCases.length).toBe(18);
    expect(quantoErrors.length).toBe(6);
  });

  for (const c of quantoCases) {
    it(`${c.id}: codes, scale, shift, packed bytes and dequantized values are bit-exact`, () => {
      const input = npy<Float32Array>(`inputs/${c.input}.npy`);
      const shape = asShape(input.shape);
      const bits = c.params.nbits as 2 | 4;
      const axis = c.params.axis as 0 | -1;
      const golden = {
        gridShape: npy<Uint8Array>(c.files.codes.file).shape,
        paramShape: npy<Float32Array>(c.files.scale.file).shape,
        codes: npy<Uint8Array>(c.files.codes.file).data,
        packed: npy<Uint8Array>(c.files.packed.file).data,
        scale: npy<Float32Array>(c.files.scale.file).data,
        shift: npy<Float32Array>(c.files.zero.file).data,
        dequantized: npy<Float32Array>(c.files.deq.file).data,
      };
      const q = quantoQuantizer.quantize(kvTensor(shape, 'float32', input.data), {
        nbits: bits, axis, groupSize: c.params.group_size,
      });
      expect(q.packed.length).toBe(c.files.packed.shape[0]! * c.files.packed.shape[1]!);
      expectMatchesReference(q, quantoQuantizer.dequantize(q).data, golden);

      // The plain kernels must give the same bits as whatever path quanto.ts dispatched to.
      const scalar = scalarRoundTrip(input.data, shape, bits, axis, c.params.group_size, Math.fround);
      expect(firstByteMismatch(scalar.packed, golden.packed), 'scalar packed').toBeNull();
      expect(firstBitMismatch(scalar.scale, golden.scale), 'scalar scale').toBeNull();
      expect(firstBitMismatch(scalar.shift, golden.shift), 'scalar shift').toBeNull();
      expect(firstBitMismatch(scalar.dequantized, golden.dequantized), 'scalar dequantized').toBeNull();

      // and the independent spec re-derivation agrees too (it is the oracle for the adversarial tests below)
      const reference = referenceQuanto(input.data, shape, bits, axis, c.params.group_size, Math.fround);
      expect(firstByteMismatch(reference.packed, golden.packed), 'reference packed').toBeNull();
      expect(firstBitMismatch(reference.dequantized, golden.dequantized), 'reference dequantized').toBeNull();
    });
  }

  for (const c of quantoErrors) {
    it(`${c.id}: refused with the library's message`, () => {
      const shape = asShape(c.input_shape);
      const x = kvTensor(shape, 'float32', new Float32Array(shape[0] * shape[1] * shape[2] * shape[3]));
      const libraryText = c.error.replace(/^ValueError: /, '');
      let error: unknown;
      try {
        quantoQuantizer.quantize(x, { nbits: c.params.nbits, axis: c.params.axis, groupSize: c.params.group_size });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(QuantizationError);
      const message = (error as Error).message;
      expect(message.startsWith(libraryText)).toBe(true);
      // kvscope's explanation names the product and a fix that works
      expect(message).toContain('batch·kv_heads·seq = 1·2·100 = 200');
      expect(message).toMatch(/nearest: [\d, ]*\b(40|50|100)\b/);
    });
  }
});

function quantize(x: Float32Array, shape: KvShape, dtype: KvDtype, nbits: number, axis: number, groupSize: number): QuantizedTensor {
  return quantoQuantizer.quantize(kvTensor(shape, dtype, x), { nbits, axis, groupSize });
}

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error, none was thrown');
}

describe('quanto quantizer: semantics the golden vectors do not reach', () => {
  it('constant groups: scale 0, code 0, and the dequantized value is exactly the constant (both axes, both dtypes)', () => {
    for (const dtype of ['float32', 'float16'] as const) {
      for (const axis of [0, -1] as const) {
        const shape: KvShape = [1, 2, 16, 16];
        const x = new Float32Array(512);
        // axis 0 groups = runs of 16 (one token row); axis -1 groups = 16 token rows of one channel
        for (let i = 0; i < x.length; i++) x[i] = axis === 0 ? Math.floor(i / 16) * 0.25 - 3 : ((i % 16) - 8) * 0.125;
        const q = quantize(x, shape, dtype, 4, axis, 16);
        expect(q.scale.length).toBe(32);
        expect(Array.from(q.scale).every((s) => Object.is(s, 0))).toBe(true);
        expect(quantoQuantizer.unpackCodes(q).every((c) => c === 0)).toBe(true);
        expect(firstBitMismatch(quantoQuantizer.dequantize(q).data, x)).toBeNull();
      }
    }
  });

  it('constant groups among varied ones keep the others exact: a zero group, a −0 group and a ramp', () => {
    const x = new Float32Array(64);
    for (let i = 32; i < 48; i++) x[i] = -0;
    for (let i = 48; i < 64; i++) x[i] = i - 48; // ramp 0 … 15: scale 1, codes = values
    const q = quantize(x, [1, 1, 4, 16], 'float32', 4, 0, 16);
    expect(Array.from(q.scale)).toEqual([0, 0, 0, 1]);
    expect(Object.is(q.zero[2], 0)).toBe(true); // shift = −(−0) = +0
    const codes = quantoQuantizer.unpackCodes(q);
    expect(Array.from(codes.subarray(48))).toEqual(Array.from({ length: 16 }, (_, i) => i));
    const deq = quantoQuantizer.dequantize(q).data;
    expect(firstBitMismatch(deq.subarray(0, 32), x.subarray(0, 32))).toBeNull();
    expect(firstBitMismatch(deq.subarray(48), x.subarray(48))).toBeNull();
    // "exactly min" holds up to the sign of zero: 0·0 − (+0) = +0 in IEEE arithmetic, in torch as here
    expect(Array.from(deq.subarray(32, 48)).every((v) => Object.is(v, 0))).toBe(true);
  });

  it('rounds ties half to even, as torch.round does (4 and 2 bits)', () => {
    // min 0 and max 15 give scale 1, so (x + 0) / 1 = x: codes are round-half-even(x)
    // two groups (one group alone would take the per-element path of spec §3.1); both tied the same way
    const ties4 = [0, 15, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 14.5];
    const expected4 = [0, 15, 0, 2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 14];
    // both dtypes (the values are exact in both), and the plain kernels as well as the dispatched SIMD ones
    for (const dtype of ['float32', 'float16'] as const) {
      const x = Float32Array.from([...ties4, ...ties4]);
      const q4 = quantize(x, [1, 1, 2, 16], dtype, 4, 0, 16);
      expect(Array.from(q4.scale)).toEqual([1, 1]);
      expect(Array.from(quantoQuantizer.unpackCodes(q4))).toEqual([...expected4, ...expected4]);
      const plain = scalarRoundTrip(x, [1, 1, 2, 16], 4, 0, 16, dtype === 'float16' ? halfByTable : Math.fround);
      expect(Array.from(unpackWeights(plain.packed, 2, 16, 4))).toEqual([...expected4, ...expected4]);
    }
    // 2 bits: min 0, max 3 → scale 1; values one float32 ulp off a tie round to the nearer code
    const ties2 = [0, 3, 0.5, 1.5, 2.5, 2.4999998, 1.5000001, 0.49999997, 0, 3, 0.5, 1.5, 2.5, 1, 2, 3];
    const q2 = quantize(Float32Array.from([...ties2, ...ties2]), [1, 1, 2, 16], 'float32', 2, 0, 16);
    expect(Array.from(q2.scale)).toEqual([1, 1]);
    const expected2 = [0, 3, 0, 2, 2, 2, 2, 0, 0, 3, 0, 2, 2, 1, 2, 3];
    expect(Array.from(quantoQuantizer.unpackCodes(q2))).toEqual([...expected2, ...expected2]);
    // the same ties along axis -1: 16 token rows of one channel per group
    const q4Columns = quantize(Float32Array.from(ties4.flatMap((v) => [v, v, v, v])), [1, 1, 16, 4], 'float32', 4, -1, 16);
    expect(Array.from(q4Columns.scale)).toEqual([1, 1, 1, 1]);
    expect(Array.from(quantoQuantizer.unpackCodes(q4Columns))).toEqual(expected4.flatMap((c) => [c, c, c, c]));
  });

  it('ties created by float32 rounding of (x + shift) / scale follow torch, not exact arithmetic', () => {
    // scale = (1.4 − 0) / 15 rounds in float32, so exact-arithmetic halves move; the reference rounds per op
    const x = new Float32Array(64);
    const random = seededRandom(7);
    for (let i = 0; i < 64; i++) x[i] = Math.fround(Math.round(random() * 14) * 0.1);
    for (const axis of [0, -1] as const) quantizeAndCompareWithReference(x, [1, 1, 16, 4], 'float32', 4, axis, 16);
  });

  it('tiny ranges: neighbouring floats, subnormals and a range whose scale underflows to 0', () => {
    const shape: KvShape = [1, 1, 8, 16];
    const x = new Float32Array(128);
    const one = 1;
    const nextUp = (v: number): number => {
      const f = new Float32Array([v]);
      const u = new Uint32Array(f.buffer);
      u[0]! += v >= 0 ? 1 : -1;
      return f[0]!;
    };
    for (let i = 0; i < 16; i++) x[i] = i % 3 === 0 ? nextUp(one) : one; // range 1 ulp
    for (let i = 16; i < 32; i++) x[i] = (i % 5) * 1e-45; // subnormals: 0 … 4 · 2^-149
    for (let i = 32; i < 48; i++) x[i] = i % 2 ? 1.401298464324817e-45 : 0; // range 2^-149: scale underflows to 0
    for (let i = 48; i < 64; i++) x[i] = -1e-40 * (i - 48); // subnormal ramp
    for (let i = 64; i < 128; i++) x[i] = 1e-7 * Math.sin(i);
    for (const bits of [2, 4] as const) {
      quantizeAndCompareWithReference(x, shape, 'float32', bits, 0, 16);
      const q = quantize(x, shape, 'float32', bits, 0, 16);
      expect(q.scale[2]).toBe(0); // 2^-149 / 15 rounds to 0 in float32
      // x = min gives 0/0 = NaN → 0; x = max gives 2^-149/0 = Inf → clamped to qmax; both dequantize to min
      expect(Array.from(quantoQuantizer.unpackCodes(q).subarray(32, 36))).toEqual([0, 2 ** bits - 1, 0, 2 ** bits - 1]);
      expect(Array.from(quantoQuantizer.dequantize(q).data.subarray(32, 36))).toEqual([0, 0, 0, 0]);
    }
  });

  it('a range that overflows float32 gives an infinite scale and NaN outputs, as torch does', () => {
    const x = new Float32Array(32);
    for (let i = 0; i < 16; i++) x[i] = i % 2 ? 3e38 : -3e38;
    for (let i = 16; i < 32; i++) x[i] = i;
    const q = quantize(x, [1, 1, 2, 16], 'float32', 4, 0, 16);
    expect(Array.from(q.scale)).toEqual([Infinity, 1]);
    // (x + shift) / Inf = 0, and the max gives (3e38 + 3e38) / Inf = Inf / Inf = NaN → 0
    expect(Array.from(quantoQuantizer.unpackCodes(q).subarray(0, 16))).toEqual(new Array(16).fill(0));
    const deq = quantoQuantizer.dequantize(q).data;
    expect(deq.subarray(0, 16).every((v) => Number.isNaN(v))).toBe(true); // Inf·0 = NaN
    expect(firstBitMismatch(deq.subarray(16), x.subarray(16))).toBeNull();
    quantizeAndCompareWithReference(x, [1, 1, 2, 16], 'float32', 4, 0, 16);
  });

  it('one group for the whole tensor (axis 0, N/g = 1): per-element scale and shift, exact round trip (spec §3.1)', () => {
    for (const [shape, g] of [[[1, 1, 2, 8], 16], [[1, 1, 1, 6], 6], [[1, 3, 2, 4], 24]] as const) {
      const x = normalTensor(g, 11);
      const q = quantize(x, shape, 'float32', 4, 0, g);
      expect(q.gridShape).toEqual([1, g]);
      expect(q.paramShape).toEqual([1, g]);
      expect(Array.from(q.scale)).toEqual(new Array(g).fill(0));
      expect(firstBitMismatch(q.zero, x.map((v) => -v))).toBeNull();
      expect(firstBitMismatch(quantoQuantizer.dequantize(q).data, x)).toBeNull();
      quantizeAndCompareWithReference(x, shape, 'float32', 4, 0, g);
      quantizeAndCompareWithReference(x, shape, 'float32', 2, 0, g);
    }
  });

  it('sequence lengths that are not multiples of the group size: groups straddle tokens and heads', () => {
    const cases: [KvShape, 0 | -1, number][] = [
      [[1, 3, 37, 8], 0, 24], // 888 values per batch entry, groups cross token rows
      [[2, 3, 37, 8], 0, 37], // groups of 37 straddle rows of 8
      [[1, 2, 100, 128], 0, 32],
      [[2, 3, 5, 16], -1, 6], // B·H·S = 30, A = 5 token blocks (not a multiple of 4)
      [[1, 3, 7, 12], -1, 3], // A = 7, groups cross head boundaries
      [[1, 2, 10, 6], -1, 4], // head_dim 6
      [[1, 1, 48, 20], -1, 16], // A = 3
    ];
    for (const [shape, axis, g] of cases) {
      const x = normalTensor(shape[0] * shape[1] * shape[2] * shape[3], 100 + g);
      for (const bits of [2, 4] as const) quantizeAndCompareWithReference(x, shape, 'float32', bits, axis, g);
    }
  });

  it('group sizes whose rows do not fill the last packed row (odd rows at 4 bits, rows % 4 ≠ 0 at 2 bits)', () => {
    for (const [shape, axis, g] of [[[1, 1, 5, 16], 0, 16], [[1, 1, 7, 16], 0, 16], [[1, 1, 6, 32], 0, 32], [[1, 2, 3, 8], -1, 3], [[1, 1, 7, 8], -1, 7]] as const) {
      const x = normalTensor(shape[0] * shape[1] * shape[2] * shape[3], 5);
      for (const bits of [2, 4] as const) quantizeAndCompareWithReference(x, shape as KvShape, 'float32', bits, axis, g);
    }
  });

  it('signed zeros: −0 orders below +0, the same in every path (kvscope convention, max-optimizer.ts)', () => {
    const x = new Float32Array(64);
    for (let i = 0; i < 64; i++) x[i] = i % 3 === 0 ? -0 : i % 3 === 1 ? 0 : (i % 7) * 0.5;
    for (let i = 32; i < 48; i++) x[i] = i % 2 ? 0 : -0; // all-zero group of mixed signs
    for (const axis of [0, -1] as const) quantizeAndCompareWithReference(x, [1, 1, 16, 4], 'float32', 4, axis, 16);
    const q = quantize(x, [1, 1, 16, 4], 'float32', 4, 0, 16);
    expect(Object.is(q.zero[0], 0)).toBe(true); // min −0 → shift +0
    expect(Object.is(q.zero[2], 0)).toBe(true); // the mixed all-zero group: min −0
    expect(Object.is(q.scale[2], 0)).toBe(true); // max +0 − min −0 = +0
  });
});

describe('quanto quantizer: float16 tensors (torch computes in half, rounding after every op; spec §3.4)', () => {
  function randomHalfTensor(count: number, seed: number, magnitudeBits: number): Float32Array {
    const random = seededRandom(seed);
    const x = new Float32Array(count);
    for (let i = 0; i < count; i++) {
      // exponents spread over a band, including subnormals when magnitudeBits reaches down to 0
      const exponent = Math.floor(random() * magnitudeBits) + (15 - Math.floor(magnitudeBits / 2));
      const bits = (random() < 0.5 ? 0x8000 : 0) | (Math.max(0, Math.min(30, exponent)) << 10) | Math.floor(random() * 1024);
      x[i] = halfValue(bits);
    }
    return x;
  }

  it('the independent half rounding used as the oracle agrees with app/tensor/float16.ts', async () => {
    const { roundToFloat16 } = await import('../../tensor/float16.js');
    const random = seededRandom(3);
    for (let i = 0; i < 20000; i++) {
      const v = (random() - 0.5) * 2 ** (Math.floor(random() * 40) - 25);
      expect(Object.is(halfByTable(v), roundToFloat16(v))).toBe(true);
    }
    expect(halfByTable(65519.99)).toBe(65504);
    expect(halfByTable(65520)).toBe(Infinity);
    expect(halfByTable(2 ** -25)).toBe(0); // tie between 0 and the smallest subnormal: even wins
  });

  for (const axis of [0, -1] as const) {
    for (const bits of [2, 4] as const) {
      it(`axis ${axis}, ${bits} bits: bit-exact against a straightforward per-op half reference, outputs in fp16, within one step`, () => {
        const shape: KvShape = [1, 4, 24, 32];
        const x = randomHalfTensor(shape[1] * shape[2] * shape[3], 40 + bits - axis, 8);
        const g = 32;
        quantizeAndCompareWithReference(x, shape, 'float16', bits, axis, g);
        const q = quantize(x, shape, 'float16', bits, axis, g);
        expect(q.dtype).toBe('float16');
        expect(Array.from(q.scale).every((s) => halfByTable(s) === s)).toBe(true);
        const deq = quantoQuantizer.dequantize(q);
        expect(deq.dtype).toBe('float16');
        const layout = groupLayout(shape, axis, g);
        for (let i = 0; i < x.length; i++) {
          const v = deq.data[i]!;
          expect(halfByTable(v)).toBe(v); // representable in half
          const p = groupOf(i, shape, layout.paramsPerColumn, g);
          // one quantization step of its group, plus the half roundings of scale·q and the subtraction
          expect(Math.abs(v - x[i]!)).toBeLessThanOrEqual(q.scale[p]! * 0.5 + halfUlp(v) + halfUlp(q.scale[p]! * 2 ** bits));
        }
      });
    }
  }

  it('half-specific rounding: constant groups, subnormal scales and large magnitudes', () => {
    const shape: KvShape = [1, 1, 5, 16];
    const x = new Float32Array(80);
    for (let i = 64; i < 80; i++) x[i] = halfByTable(1e-3 + (i % 16) * 4.7e-5); // scale ≈ 4.7e-5: a half subnormal
    for (let i = 0; i < 16; i++) x[i] = 1000; // constant
    for (let i = 16; i < 32; i++) x[i] = halfValue(i % 4); // subnormals 0 … 3·2^-24: scale underflows
    for (let i = 32; i < 48; i++) x[i] = halfValue(0x7bff - (i % 5)) * (i % 2 ? 1 : -1); // ±65504: max − min overflows to Inf
    for (let i = 48; i < 64; i++) x[i] = halfValue(0x3c00 + i * 37); // around 1 … 2
    for (const bits of [2, 4] as const) quantizeAndCompareWithReference(x, shape, 'float16', bits, 0, 16);
    const q = quantize(x, shape, 'float16', 4, 0, 16);
    expect(q.scale[0]).toBe(0);
    expect(q.scale[2]).toBe(Infinity);
    expect(Array.from(quantoQuantizer.dequantize(q).data.subarray(0, 16))).toEqual(new Array(16).fill(1000));
  });
});

function halfUlp(v: number): number {
  const a = Math.abs(v);
  if (a < 2 ** -14) return 2 ** -24;
  return 2 ** (Math.floor(Math.log2(a)) - 10);
}

/** Parameter index of flat element i: its row (axis 0) or its column d·A + a (axis −1). */
function groupOf(i: number, shape: KvShape, perColumn: boolean, g: number): number {
  if (!perColumn) return Math.floor(i / g);
  const d = i % shape[3];
  const tokenRow = Math.floor(i / shape[3]);
  const blocks = (shape[0] * shape[1] * shape[2]) / g;
  return d * blocks + Math.floor(tokenRow / g);
}

describe('quanto quantizer: refusals', () => {
  const x = kvTensor([1, 2, 8, 16], 'float32', normalTensor(256, 9));

  it('refuses nbits other than 2 and 4 with transformers\' message and a fix', () => {
    for (const nbits of [1, 3, 8, 4.5]) {
      const error = thrown(() => quantoQuantizer.quantize(x, { nbits, axis: 0, groupSize: 16 }));
      expect(error).toBeInstanceOf(QuantizationError);
      expect(error.message.startsWith(`\`nbits\` for \`quanto\` backend has to be one of [\`2\`, \`4\`] but got ${nbits}`)).toBe(true);
      expect(error.message).toContain('use nbits 2 or 4');
    }
  });

  it('refuses axes other than 0 and -1 with quanto\'s message, and points HQQ\'s axis 1 to -1', () => {
    for (const axis of [1, -2, 2]) {
      const error = thrown(() => quantoQuantizer.quantize(x, { nbits: 4, axis, groupSize: 16 }));
      expect(error).toBeInstanceOf(QuantizationError);
      expect(error.message.startsWith('axis parameter must be 0 (first axis) or -1 (last axis)')).toBe(true);
      expect(error.message).toContain(`Got ${axis}`);
    }
  });

  it('refuses group sizes that are not positive integers', () => {
    for (const groupSize of [0, -16, 1.5, Number.NaN, Infinity]) {
      const error = thrown(() => quantoQuantizer.quantize(x, { nbits: 4, axis: 0, groupSize }));
      expect(error).toBeInstanceOf(QuantizationError);
      expect(error.message).toContain(`got ${groupSize}`);
    }
  });

  it('refuses a group size that does not divide, with the library text first and divisors that work', () => {
    const error = thrown(() => quantoQuantizer.quantize(kvTensor([1, 3, 37, 8], 'float32', new Float32Array(888)), { nbits: 4, axis: 0, groupSize: 64 }));
    expect(error).toBeInstanceOf(QuantizationError);
    expect(error.message.startsWith('Group size (64) must be a divisor of (888)')).toBe(true);
    expect(error.message).toContain('kv_heads·seq·head_dim = 3·37·8 = 888');
    const suggested = /nearest: ([\d, ]+)\)/.exec(error.message)![1]!.split(', ').map(Number);
    expect(suggested.length).toBeGreaterThan(0);
    for (const g of suggested) expect(888 % g).toBe(0);
    expect(error.message).toContain('make seq a multiple of 8'); // 64 / gcd(64, 3·8) = 8, and 3·40·8 = 960 = 15·64
    // a group larger than the data is the same library error
    const larger = thrown(() => quantoQuantizer.quantize(kvTensor([1, 1, 1, 8], 'float32', new Float32Array(8)), { nbits: 4, axis: 0, groupSize: 16 }));
    expect(larger.message.startsWith('Group size (16) must be a divisor of (8)')).toBe(true);
    // an empty sequence: the library's check fires with 0
    const empty = thrown(() => quantoQuantizer.quantize(kvTensor([1, 2, 0, 8], 'float32', new Float32Array(0)), { nbits: 4, axis: 0, groupSize: 16 }));
    expect(empty.message.startsWith('Group size (16) must be a divisor of (0)')).toBe(true);
  });

  for (const dtype of ['float32', 'float16'] as const) {
    for (const axis of [0, -1] as const) {
      it(`refuses NaN and ±Inf input and says where (${dtype}, axis ${axis})`, () => {
        const shape: KvShape = [1, 2, 16, 16];
        for (const [position, value] of [[0, Number.NaN], [16 * 16 + 5, Number.NaN], [77, Infinity], [511, -Infinity], [16, Number.NaN]] as const) {
          const data = normalTensor(512, 21);
          data[position] = value;
          if (position === 16) data[200] = Infinity; // two bad values: the first one is named, both are counted
          const error = thrown(() => quantoQuantizer.quantize(kvTensor(shape, dtype, dtype === 'float16' ? data.map(halfByTable) : data), { nbits: 4, axis, groupSize: 16 }));
          expect(error).toBeInstanceOf(QuantizationError);
          const [b, h, s, d] = [0, Math.floor(position / 256), Math.floor(position / 16) % 16, position % 16];
          expect(error.message).toContain(`at [${b}, ${h}, ${s}, ${d}] (flat index ${position})`);
          const nanCount = Number.isNaN(value) ? 1 : 0;
          const infCount = (Number.isNaN(value) ? 0 : 1) + (position === 16 ? 1 : 0);
          expect(error.message).toContain(`found ${nanCount} NaN and ${infCount} ±Infinity among 512 values`);
        }
      });
    }
  }

  it('checks what it is asked to dequantize', () => {
    const q = quantoQuantizer.quantize(x, { nbits: 4, axis: 0, groupSize: 16 });
    expect(() => quantoQuantizer.dequantizeInto(q, new Float32Array(255))).toThrow(/needs an output of 256 values/);
    expect(() => quantoQuantizer.dequantize({ ...q, backend: 'hqq' })).toThrow(QuantizationError);
    expect(() => quantoQuantizer.unpackCodes({ ...q, packed: q.packed.subarray(1) })).toThrow(/needs 128 packed bytes and 16 scales/);
    expect(() => quantoQuantizer.dequantize({ ...q, params: { ...q.params, nbits: 3 } })).toThrow(/`nbits` for `quanto`/);
  });
});

describe('quanto quantizer: the quantized tensor object', () => {
  it('records params, shapes and byte cost as the library stores them (spec §3.6: 4.5 bits/value at int4, g 64, fp16)', async () => {
    const { quantizedByteSize } = await import('../types.js');
    const shape: KvShape = [1, 2, 64, 64];
    const q = quantize(normalTensor(8192, 1).map(halfByTable), shape, 'float16', 4, 0, 64);
    expect(q.backend).toBe('quanto');
    expect(q.params).toEqual({ nbits: 4, axis: 0, groupSize: 64 });
    expect(q.shape).toEqual(shape);
    expect(q.gridShape).toEqual([128, 64]);
    expect(q.paramShape).toEqual([128, 1]);
    expect(q.packed.length).toBe(64 * 64); // [ceil(128 / 2), 64]
    expect((quantizedByteSize(q) * 8) / 8192).toBe(4.5);
    const q2 = quantize(normalTensor(8192, 1).map(halfByTable), shape, 'float16', 2, -1, 64);
    expect(q2.gridShape).toEqual([64, 128]);
    expect(q2.paramShape).toEqual([1, 128]);
    expect((quantizedByteSize(q2) * 8) / 8192).toBe(2.5);
  });

  it('dequantizeInto writes into a view at an offset and matches dequantize', () => {
    const x = normalTensor(2048, 2);
    const q = quantize(x, [1, 2, 16, 64], 'float32', 4, -1, 16);
    const backing = new Float32Array(4096).fill(7);
    const view = backing.subarray(1024, 3072);
    quantoQuantizer.dequantizeInto(q, view);
    expect(firstBitMismatch(view, quantoQuantizer.dequantize(q).data)).toBeNull();
    expect(backing[1023]).toBe(7);
    expect(backing[3072]).toBe(7);
  });

  it('does not modify its input', () => {
    const x = normalTensor(2048, 4);
    const copy = x.slice();
    quantize(x, [1, 2, 16, 64], 'float32', 2, 0, 64);
    expect(firstBitMismatch(x, copy)).toBeNull();
  });
});
