import { describe, expect, it } from 'vitest';
import { kvTensor } from '../../tensor/kv-tensor.js';
import type { KvShape } from '../../tensor/kv-tensor.js';
import { roundToFloat16 } from '../../tensor/float16.js';
import { errorStats } from '../error-stats.js';
import { packCodes } from './bitpack.js';
import { hqqQuantizer, quantizeHqq } from './hqq.js';
import { normalSamples } from './normal-samples.js';

const fround = Math.fround;
const engines = ['js', 'auto'] as const;

describe('HQQ on awkward inputs', () => {
  for (const axis of [0, 1] as const) {
    it(`gives constant and tiny-range groups inverse scale 1 and reproduces them (axis ${axis})`, () => {
      // [1, 1, 64, 64], g = 64: axis 1 groups are rows of 64; axis 0 groups are columns (every 64th value)
      const shape: KvShape = [1, 1, 64, 64];
      const values = normalSamples(4096, 7);
      const special = axis === 1 ? [3, 10, 11] : [5, 40, 41];
      const member = (i: number): number => (axis === 1 ? Math.floor(i / 64) : i % 64);
      for (let i = 0; i < values.length; i++) {
        const g = member(i);
        if (g === special[0]) values[i] = 0.5; // constant: max − min = 0
        if (g === special[1]) values[i] = fround(-2 + (i % 7) * 1e-5); // range 6e-5 <= 1e-4
        if (g === special[2]) values[i] = 0; // constant zero
      }
      for (const engine of engines) {
        const { tensor } = quantizeHqq(kvTensor(shape, 'float32', values), { nbits: 4, axis, groupSize: 64 }, { engine });
        const out = hqqQuantizer.dequantize(tensor).data;
        for (const g of special) expect(tensor.scale[g]).toBe(1);
        for (let i = 0; i < values.length; i++) {
          if (!special.includes(member(i))) continue;
          expect(Math.abs(out[i]! - values[i]!)).toBeLessThanOrEqual(1e-4);
        }
        expect(tensor.scale.every((s) => s > 0 && Number.isFinite(s))).toBe(true);
        expect(tensor.zero.every((z) => Number.isFinite(z))).toBe(true);
      }
    });
  }

  it('clamps the inverse scale at 2e4 (8 bits over a 0.005 range)', () => {
    const values = Float32Array.from({ length: 2048 }, (_, i) => fround(1 + (i % 64) * (0.005 / 63)));
    const { tensor } = quantizeHqq(kvTensor([1, 2, 16, 64], 'float32', values), { nbits: 8, axis: 1, groupSize: 64 });
    // 255 / 0.005 = 51000 > 2e4: stored scale = float32(1 / 2e4)
    expect(tensor.scale.every((s) => s === fround(1 / 2e4))).toBe(true);
  });

  for (const [shape, groupSize] of [[[1, 2, 37, 64], 64], [[1, 3, 40, 48], 64], [[2, 2, 21, 64], 32]] as [KvShape, number][]) {
    for (const axis of [0, 1] as const) {
      it(`quantizes [${shape.join(', ')}] with g${groupSize}, axis ${axis}: groups straddle tokens and heads`, () => {
        const n = shape.reduce((a, b) => a * b, 1);
        const x = kvTensor(shape, 'float32', normalSamples(n, n + axis));
        const js = quantizeHqq(x, { nbits: 4, axis, groupSize }, { engine: 'js' });
        const auto = quantizeHqq(x, { nbits: 4, axis, groupSize });
        expect(Array.from(auto.tensor.packed)).toEqual(Array.from(js.tensor.packed));
        const out = hqqQuantizer.dequantize(auto.tensor);
        expect(out.shape).toEqual(shape);
        // 4-bit HQQ on N(0, 1) data: about 10% relative error (the golden cases: 0.09–0.12)
        const stats = errorStats(x.data, out.data);
        expect(stats.relFroErr).toBeGreaterThan(0.05);
        expect(stats.relFroErr).toBeLessThan(0.15);
      });
    }
  }

  for (const nbits of [1, 2, 3, 4, 8]) {
    it(`round-trips ${nbits}-bit codes through packing`, () => {
      const { tensor } = quantizeHqq(kvTensor([1, 2, 16, 64], 'float32', normalSamples(2048, nbits)), { nbits, axis: 0, groupSize: 64 });
      const codes = hqqQuantizer.unpackCodes(tensor);
      expect(codes.length).toBe(2048);
      expect(Math.max(...codes)).toBeLessThanOrEqual(2 ** nbits - 1);
      expect(Math.max(...codes)).toBeGreaterThan(0);
      expect(Array.from(packCodes(codes, 64, 32, nbits))).toEqual(Array.from(tensor.packed));
    });
  }

  for (const axis of [0, 1] as const) {
    it(`keeps float16 tensors in float16: stored parameters and dequantized values (axis ${axis})`, () => {
      const values = normalSamples(4096, 11 + axis).map(roundToFloat16);
      const x = kvTensor([1, 2, 32, 64], 'float16', values);
      const x32 = kvTensor([1, 2, 32, 64], 'float32', values);
      const { tensor } = quantizeHqq(x, { nbits: 4, axis, groupSize: 64 });
      const reference = quantizeHqq(x32, { nbits: 4, axis, groupSize: 64 }).tensor;
      expect(tensor.dtype).toBe('float16');
      // the optimizer runs in float32 either way (`tensor.float()`); only storage and dequant differ
      expect(Array.from(tensor.packed)).toEqual(Array.from(reference.packed));
      expect(Array.from(tensor.scale)).toEqual(Array.from(reference.scale, roundToFloat16));
      expect(Array.from(tensor.zero)).toEqual(Array.from(reference.zero, roundToFloat16));
      const out = hqqQuantizer.dequantize(tensor);
      expect(out.dtype).toBe('float16');
      const codes = hqqQuantizer.unpackCodes(tensor);
      for (let i = 0; i < out.data.length; i++) {
        const g = axis === 1 ? Math.floor(i / 64) : i % 64;
        // ((q − zero) · scale) with each op rounded to float16
        expect(out.data[i]).toBe(roundToFloat16(roundToFloat16(codes[i]! - tensor.zero[g]!) * tensor.scale[g]!));
      }
      expect(errorStats(values, out.data).relFroErr).toBeLessThan(0.15);
    });
  }
});
