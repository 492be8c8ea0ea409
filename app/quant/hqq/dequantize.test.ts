import { describe, expect, it } from 'vitest';
import { QuantizationError } from '../../errors.js';
import { roundToFloat16 } from '../../tensor/float16.js';
import { kvTensor } from '../../tensor/kv-tensor.js';
import type { KvShape } from '../../tensor/kv-tensor.js';
import type { QuantizedTensor } from '../types.js';
import { dequantizeHqqInto } from './dequantize.js';
import { hqqGrid } from './grid.js';
import type { HqqAxis } from './grid.js';
import { hqqQuantizer, quantizeHqq } from './hqq.js';
import { releaseHqqKernels } from './kernels.js';
import { normalSamples } from './normal-samples.js';

const fround = Math.fround;

function input(q: QuantizedTensor) {
  const n = q.shape.reduce((a, b) => a * b, 1);
  return { grid: hqqGrid(n, q.params.groupSize, q.params.axis as HqqAxis), nbits: q.params.nbits, dtype: q.dtype, packed: q.packed, scale: q.scale, zero: q.zero };
}

describe('HQQ dequantization', () => {
  const layouts: [KvShape, number, HqqAxis][] = [[[1, 2, 16, 64], 64, 0], [[1, 2, 16, 64], 32, 1], [[1, 1, 15, 64], 64, 0], [[1, 3, 8, 20], 24, 1]];
  for (const [shape, groupSize, axis] of layouts) {
    for (const nbits of [1, 2, 3, 4, 8]) {
      const n = shape.reduce((a, b) => a * b, 1);
      const rows = axis === 1 ? n / groupSize : groupSize;
      if ((nbits === 3 && axis === 1) || (nbits !== 3 && nbits !== 8 && rows % (8 / nbits) !== 0)) continue;
      it(`gives the same bits in WebAssembly and JavaScript: [${shape.join(', ')}] g${groupSize} axis ${axis}, ${nbits}-bit`, () => {
        const q = hqqQuantizer.quantize(kvTensor(shape, 'float32', normalSamples(n, nbits + axis)), { nbits, axis, groupSize });
        const fast = new Float32Array(n);
        const plain = new Float32Array(n);
        dequantizeHqqInto(input(q), fast);
        dequantizeHqqInto(input(q), plain, false);
        expect(Array.from(fast)).toEqual(Array.from(plain));
        // ((q − zero) · scale), each op rounded to float32
        const codes = hqqQuantizer.unpackCodes(q);
        const groups = n / groupSize;
        for (let i = 0; i < n; i += 7) {
          const g = axis === 1 ? Math.floor(i / groupSize) : i % groups;
          expect(fast[i]).toBe(fround(fround(codes[i]! - q.zero[g]!) * q.scale[g]!));
        }
      });
    }
  }

  it('float16, 3-bit (the per-group table of 8 levels): ((q − zero) · scale) with each op rounded to binary16, never NaN', () => {
    const shape: KvShape = [1, 2, 16, 64];
    const n = 2 * 16 * 64;
    const half = normalSamples(n, 5).map(roundToFloat16);
    for (const groupSize of [16, 64]) {
      const q = hqqQuantizer.quantize(kvTensor(shape, 'float16', half), { nbits: 3, axis: 0, groupSize });
      const out = new Float32Array(n);
      dequantizeHqqInto(input(q), out);
      const codes = hqqQuantizer.unpackCodes(q);
      const groups = n / groupSize;
      for (let i = 0; i < n; i++) expect(out[i]).toBe(roundToFloat16(roundToFloat16(codes[i]! - q.zero[i % groups]!) * q.scale[i % groups]!));
    }
  });

  it('gives the same bits when the kernel works in chunks that start inside a plane of packed rows', () => {
    // axis 0, 49,152 columns: the kernel's 4 MiB output chunks hold 21 rows, so chunks start at rows
    // 21, 42 and 63, inside the 16- and 32-row planes of 2- and 4-bit packing
    const shape: KvShape = [1, 6, 4096, 128];
    const n = shape.reduce((a, b) => a * b, 1);
    for (const nbits of [2, 4]) {
      const q = hqqQuantizer.quantize(kvTensor(shape, 'float32', normalSamples(n, 70 + nbits)), { nbits, axis: 0, groupSize: 64 });
      const fast = new Float32Array(n);
      const plain = new Float32Array(n);
      dequantizeHqqInto(input(q), fast);
      dequantizeHqqInto(input(q), plain, false);
      let differing = 0;
      for (let i = 0; i < n; i++) if (!Object.is(fast[i], plain[i])) differing++;
      expect(differing).toBe(0);
    }
  });

  it('writes into a caller buffer without allocating a tensor, and checks its length', () => {
    const q = hqqQuantizer.quantize(kvTensor([1, 2, 16, 64], 'float32', normalSamples(2048, 3)), { nbits: 4, axis: 0, groupSize: 64 });
    const out = new Float32Array(2048);
    hqqQuantizer.dequantizeInto(q, out);
    expect(Array.from(out)).toEqual(Array.from(hqqQuantizer.dequantize(q).data));
    expect(() => hqqQuantizer.dequantizeInto(q, new Float32Array(2047))).toThrow(/2048 values/);
  });

  it('recompiles its kernels after releaseHqqKernels()', () => {
    const x = kvTensor([1, 2, 16, 64], 'float32', normalSamples(2048, 4));
    const before = quantizeHqq(x, { nbits: 4, axis: 1, groupSize: 64 });
    releaseHqqKernels();
    const after = quantizeHqq(x, { nbits: 4, axis: 1, groupSize: 64 });
    expect(after.engine).toBe('wasm');
    expect(Array.from(after.tensor.packed)).toEqual(Array.from(before.tensor.packed));
  });

  it('refuses tensors of another backend', () => {
    const q = hqqQuantizer.quantize(kvTensor([1, 1, 2, 64], 'float32', normalSamples(128, 1)), { nbits: 4, axis: 0, groupSize: 64 });
    expect(() => hqqQuantizer.dequantize({ ...q, backend: 'quanto' })).toThrow(QuantizationError);
  });
});
