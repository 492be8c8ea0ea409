import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWasmThreadPool } from '../../node/wasm-thread-pool.js';
import type { WasmThreadPool } from '../../wasm/wasm-threads.js';
import { wasmApi } from '../../wasm/wasm-runtime.js';
import { hqqKernels, setHqqThreadPool } from './kernels.js';
import { kvTensor } from '../../tensor/kv-tensor.js';
import type { KvDtype, KvShape } from '../../tensor/kv-tensor.js';
import { roundToFloat16 } from '../../tensor/float16.js';
import { roundHalfEven } from '../rounding.js';
import { hqqQuantizer, quantizeHqq } from './hqq.js';
import { normalSamples } from './normal-samples.js';
import { SHRINK_EXPONENT, SHRINK_WEIGHT, shrinkPow } from './shrink.js';
import { columnSums, fullSum, rowSums } from './torch-sum.js';
import { createWasmEngine, wasmEngineSupports, wasmStepSplits } from './optimize-wasm.js';
import type { RunOrder } from './optimize-wasm.js';
import { groupRanges, paramsFromRanges } from './init-params.js';
import { SHRINK_ZERO_BELOW } from './shrink.js';
import { hqqGrid } from './grid.js';

/**
 * The optimized engines against a deliberately plain HQQ written here from the spec (§3.2): explicit
 * group member lists, the shrinkage formula with no skip below its threshold, one element at a time.
 * The JavaScript engine, the WebAssembly engine and this reference must agree bit for bit. Only the
 * definitions they share are imported: torch's summation order (torch-sum.ts) and the float32 power
 * (shrink.ts), which golden parity (hqq.test.ts) checks against the library.
 */
const fround = Math.fround;

interface Reference {
  readonly codes: Uint8Array;
  readonly scale: Float32Array;
  readonly zero: Float32Array;
  readonly stepErrors: number[];
}

function referenceHqq(values: Float32Array, nbits: number, axis: 0 | 1, groupSize: number): Reference {
  const n = values.length;
  const groups = n / groupSize;
  const maxCode = 2 ** nbits - 1;
  const members: number[][] = [];
  for (let k = 0; k < groups; k++) {
    members.push(Array.from({ length: groupSize }, (_, j) => (axis === 1 ? k * groupSize + j : k + j * groups)));
  }
  const groupOf = new Int32Array(n);
  members.forEach((list, k) => list.forEach((i) => (groupOf[i] = k)));
  const s = new Float32Array(groups);
  const z = new Float32Array(groups);
  members.forEach((list, k) => {
    let lo = Math.min(...list.map((i) => values[i]!));
    const hi = Math.max(...list.map((i) => values[i]!));
    if (lo === 0) lo = 0;
    const denom = fround(hi - lo);
    s[k] = Math.abs(denom) <= fround(1e-4) ? 1 : Math.min(fround(fround(1 / denom) * maxCode), 2e4);
    z[k] = fround(-lo * s[k]!);
  });
  const quantize = (w: number, k: number): number => Math.min(Math.max(roundHalfEven(fround(fround(w * s[k]!) + z[k]!)), 0), maxCode);
  const stepErrors: number[] = [];
  let best = Infinity;
  for (let step = 0; step < 20; step++) {
    const target = new Float32Array(n);
    const residual = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const k = groupOf[i]!;
      const w = values[i]!;
      const q = quantize(w, k);
      const e = fround(w - fround(fround(q - z[k]!) / s[k]!));
      const a = Math.abs(e);
      const shrunk = Math.max(fround(a - fround(SHRINK_WEIGHT * shrinkPow(a))), 0) * Math.sign(e);
      target[i] = fround(q - fround(fround(w - shrunk) * s[k]!));
      residual[i] = a;
    }
    const sums = new Float32Array(groups);
    if (axis === 1) rowSums(target, groups, groupSize, sums);
    else columnSums(target, groupSize, groups, sums);
    for (let k = 0; k < groups; k++) z[k] = fround(sums[k]! / groupSize);
    const error = fround(fullSum(residual, 0, n) / fround(n));
    stepErrors.push(error);
    if (!(error < best)) break;
    best = error;
  }
  const codes = new Uint8Array(n);
  for (let i = 0; i < n; i++) codes[i] = quantize(values[i]!, groupOf[i]!);
  const scale = new Float32Array(groups);
  for (let k = 0; k < groups; k++) scale[k] = fround(1 / s[k]!);
  return { codes, scale, zero: z, stepErrors };
}

interface Case {
  readonly shape: KvShape;
  readonly nbits: number;
  readonly axis: 0 | 1;
  readonly groupSize: number;
  readonly magnitude: number;
  readonly dtype: KvDtype;
}

function input(c: Case, seed: number): Float32Array {
  const n = c.shape.reduce((a, b) => a * b, 1);
  const values = normalSamples(n, seed).map((v) => v * c.magnitude);
  return c.dtype === 'float16' ? values.map(roundToFloat16) : values;
}

const RUN_ORDERS: readonly RunOrder[] = ['interleaved', 'sequential'];

const cases: Case[] = [];
const shapes: KvShape[] = [[1, 2, 16, 64], [1, 2, 34, 64], [1, 3, 11, 32]];
for (const shape of shapes) {
  for (const nbits of [1, 2, 3, 4, 8]) {
    for (const axis of [0, 1] as const) {
      for (const groupSize of [32, 64]) {
        const n = shape.reduce((a, b) => a * b, 1);
        const rows = axis === 1 ? n / groupSize : groupSize;
        if (n % groupSize !== 0 || (nbits === 3 && axis === 1) || (nbits < 8 && nbits !== 3 && rows % (8 / nbits) !== 0)) continue;
        cases.push({ shape, nbits, axis, groupSize, magnitude: 1, dtype: 'float32' });
      }
    }
  }
}
// beyond the golden vectors: two torch thread chunks and 32-column rounding (N ≥ 32768), group sizes
// that are not multiples of 32, residuals outside the pow table's fast range, tiny values, float16
cases.push({ shape: [1, 3, 100, 128], nbits: 4, axis: 0, groupSize: 64, magnitude: 1, dtype: 'float32' });
cases.push({ shape: [1, 3, 100, 128], nbits: 2, axis: 1, groupSize: 64, magnitude: 1, dtype: 'float32' });
cases.push({ shape: [1, 2, 48, 64], nbits: 4, axis: 1, groupSize: 48, magnitude: 1, dtype: 'float32' });
cases.push({ shape: [1, 1, 11, 64], nbits: 8, axis: 0, groupSize: 22, magnitude: 1, dtype: 'float32' });
cases.push({ shape: [1, 2, 16, 64], nbits: 2, axis: 0, groupSize: 64, magnitude: 3e4, dtype: 'float32' });
cases.push({ shape: [1, 2, 16, 64], nbits: 2, axis: 1, groupSize: 64, magnitude: 3e4, dtype: 'float32' });
cases.push({ shape: [1, 2, 16, 64], nbits: 4, axis: 1, groupSize: 32, magnitude: 1e-3, dtype: 'float32' });
cases.push({ shape: [1, 2, 16, 64], nbits: 4, axis: 0, groupSize: 64, magnitude: 1, dtype: 'float16' });

describe('HQQ engines against a plain reference', () => {
  it('covers both engines', () => {
    const kinds = new Set(cases.map((c) => wasmEngineSupports(hqqGrid(c.shape.reduce((a, b) => a * b, 1), c.groupSize, c.axis))));
    expect(kinds).toEqual(new Set([true, false]));
  });

  cases.forEach((c, index) => {
    const label = `[${c.shape.join(',')}] ${c.dtype} ${c.nbits}-bit axis ${c.axis} g${c.groupSize} ×${c.magnitude}`;
    it(label, () => {
      const values = input(c, 1000 + index);
      const x = kvTensor(c.shape, c.dtype, values);
      const reference = referenceHqq(values, c.nbits, c.axis, c.groupSize);
      const params = { nbits: c.nbits, axis: c.axis, groupSize: c.groupSize };
      const js = quantizeHqq(x, params, { engine: 'js' });
      const auto = quantizeHqq(x, params);
      const grid = hqqGrid(values.length, c.groupSize, c.axis);
      expect(auto.engine).toBe(wasmEngineSupports(grid) ? 'wasm' : 'js');
      // both orders of the kernels' vectors, whatever the adaptive choice picked
      const pinned = RUN_ORDERS.map((runOrder) => quantizeHqq(x, { ...params }, { runOrder }));
      const storage = c.dtype === 'float16' ? roundToFloat16 : fround;
      for (const result of [js, auto, ...pinned]) {
        expect(result.stepErrors).toEqual(reference.stepErrors);
        expect(Array.from(hqqQuantizer.unpackCodes(result.tensor))).toEqual(Array.from(reference.codes));
        expect(Array.from(result.tensor.scale)).toEqual(Array.from(reference.scale, storage));
        expect(Array.from(result.tensor.zero)).toEqual(Array.from(reference.zero, storage));
      }
      expect(Array.from(auto.tensor.packed)).toEqual(Array.from(js.tensor.packed));
    });
  });

  it('keeps the float32 exponent of torch (lp_norm − 1 cast to the tensor dtype)', () => {
    expect(SHRINK_EXPONENT).toBe(Math.fround(-0.3));
    expect(SHRINK_EXPONENT).not.toBe(-0.3);
  });
});

/**
 * A pool whose one "helper" is a second instance on this thread, run after the caller's part: the
 * split arithmetic of optimize-wasm.ts without real threads.
 */
const sameThreadPool: WasmThreadPool = {
  helpers: 1,
  attach(module, imports) {
    const exports = new (wasmApi()!).Instance(module, imports).exports;
    return {
      helpers: 1,
      run(calls, local) {
        local();
        for (const call of calls) (exports[call.name] as (...args: number[]) => void)(...call.args);
      },
      close() {},
    };
  },
};

// two torch thread chunks (N > 32768): split unless the chunk boundary cuts a group or a column cascade block
const splitCases: Case[] = [
  { shape: [1, 3, 100, 128], nbits: 2, axis: 0, groupSize: 64, magnitude: 1, dtype: 'float32' },
  { shape: [1, 3, 100, 128], nbits: 2, axis: 1, groupSize: 64, magnitude: 1, dtype: 'float32' },
  { shape: [1, 2, 160, 128], nbits: 4, axis: 0, groupSize: 128, magnitude: 1, dtype: 'float32' },
  { shape: [1, 2, 160, 128], nbits: 4, axis: 1, groupSize: 32, magnitude: 1, dtype: 'float32' },
  { shape: [1, 2, 160, 128], nbits: 8, axis: 1, groupSize: 256, magnitude: 1, dtype: 'float32' },
  { shape: [1, 2, 160, 128], nbits: 2, axis: 0, groupSize: 32, magnitude: 3e4, dtype: 'float32' },
  { shape: [1, 2, 160, 128], nbits: 4, axis: 0, groupSize: 64, magnitude: 1, dtype: 'float16' },
  // not split: 24 rows per chunk, blocks of 16 (axis 0); an odd number of groups (axis 1)
  { shape: [1, 4, 96, 128], nbits: 2, axis: 0, groupSize: 48, magnitude: 1, dtype: 'float32' },
  { shape: [1, 1, 301, 128], nbits: 8, axis: 1, groupSize: 128, magnitude: 1, dtype: 'float32' },
];

for (const [poolName, pool] of [['a second instance on this thread', sameThreadPool], ['a worker thread', createWasmThreadPool(1)]] as const) {
  describe(`the WebAssembly engine with a helper: ${poolName}`, () => {
    // These tensors are small: split them anyway, that is what is under test.
    beforeAll(() => setHqqThreadPool(pool, { minParallelElements: 0 }));
    afterAll(() => setHqqThreadPool(null));

    it('runs on shared memory with the helper attached', () => {
      expect(hqqKernels()?.startHelpers()).toBe(true);
      const splits = splitCases.map((c) => wasmStepSplits(hqqGrid(c.shape.reduce((a, b) => a * b, 1), c.groupSize, c.axis)));
      expect(splits).toEqual([true, true, true, true, true, true, true, false, false]);
    });

    splitCases.forEach((c, index) => {
      const label = `[${c.shape.join(',')}] ${c.dtype} ${c.nbits}-bit axis ${c.axis} g${c.groupSize} ×${c.magnitude}`;
      it(label, () => {
        const values = input(c, 2000 + index);
        const x = kvTensor(c.shape, c.dtype, values);
        const reference = referenceHqq(values, c.nbits, c.axis, c.groupSize);
        const storage = c.dtype === 'float16' ? roundToFloat16 : fround;
        for (const runOrder of RUN_ORDERS) {
          const result = quantizeHqq(x, { nbits: c.nbits, axis: c.axis, groupSize: c.groupSize }, { engine: 'wasm', runOrder });
          expect(result.stepErrors).toEqual(reference.stepErrors);
          expect(Array.from(hqqQuantizer.unpackCodes(result.tensor))).toEqual(Array.from(reference.codes));
          expect(Array.from(result.tensor.scale)).toEqual(Array.from(reference.scale, storage));
          expect(Array.from(result.tensor.zero)).toEqual(Array.from(reference.zero, storage));
        }
      });
    });
  });
}

describe('the helper starts only for tensors worth splitting', () => {
  afterAll(() => setHqqThreadPool(null));

  it('quantizes small tensors on one thread without starting it, and splits large ones', () => {
    let attached = 0;
    const counting: WasmThreadPool = { helpers: 1, attach: (module, imports) => (attached++, sameThreadPool.attach(module, imports)) };
    setHqqThreadPool(counting, { minParallelElements: 1 << 16 });
    const small = splitCases[0]!; // 38,400 elements: splittable, but below the threshold
    const x = kvTensor(small.shape, small.dtype, input(small, 3000));
    const alone = quantizeHqq(x, { nbits: small.nbits, axis: small.axis, groupSize: small.groupSize }, { engine: 'wasm' });
    expect(attached).toBe(0);
    const large: Case = { ...small, shape: [1, 8, 128, 128] }; // 131,072 elements
    const y = kvTensor(large.shape, large.dtype, input(large, 3001));
    const split = quantizeHqq(y, { nbits: large.nbits, axis: large.axis, groupSize: large.groupSize }, { engine: 'wasm' });
    expect(attached).toBe(1);
    const reference = referenceHqq(y.data, large.nbits, large.axis, large.groupSize);
    expect(split.stepErrors).toEqual(reference.stepErrors);
    expect(alone.stepErrors).toEqual(referenceHqq(x.data, small.nbits, small.axis, small.groupSize).stepErrors);
  });
});

describe('the order of the kernels\' vectors follows the share that needs the power', () => {
  /** The share of 4-element vectors with a lane whose first-step residual |W − W_r| reaches the shrink threshold. */
  function firstStepShare(values: Float32Array, nbits: number, axis: 0 | 1, groupSize: number): number {
    const grid = hqqGrid(values.length, groupSize, axis);
    const maxCode = 2 ** nbits - 1;
    const { inverseScale: s, zero: z } = paramsFromRanges(groupRanges(values, grid), maxCode);
    let vectors = 0;
    for (let v = 0; v < values.length; v += 4) {
      let needs = false;
      for (let i = v; i < v + 4; i++) {
        const k = axis === 1 ? Math.floor(i / groupSize) : i % grid.cols;
        const q = Math.min(Math.max(roundHalfEven(fround(fround(values[i]! * s[k]!) + z[k]!)), 0), maxCode);
        if (Math.abs(fround(values[i]! - fround(fround(q - z[k]!) / s[k]!))) >= SHRINK_ZERO_BELOW) needs = true;
      }
      if (needs) vectors++;
    }
    return vectors / (values.length / 4);
  }

  const run = (nbits: number, axis: 0 | 1, magnitude: number): ReturnType<typeof createWasmEngine> & object => {
    const values = normalSamples(1 * 4 * 64 * 128, 4000 + nbits).map((v) => v * magnitude);
    const grid = hqqGrid(values.length, 64, axis);
    const engine = createWasmEngine(values, grid, 2 ** nbits - 1);
    if (engine === undefined) throw new Error('no WebAssembly engine here');
    const { inverseScale, zero } = paramsFromRanges(engine.groupRanges(), 2 ** nbits - 1);
    engine.start(inverseScale, zero);
    for (let i = 0; i < 4; i++) engine.step();
    expect(engine.steps[0]!.powerShare).toBeCloseTo(firstStepShare(values, nbits, axis, 64), 12);
    return engine;
  };

  it('goes sequential on axis 0 where few vectors need it (4-bit)', () => {
    const { steps } = run(4, 0, 1);
    expect(steps[0]!.powerShare).toBeLessThan(0.25);
    expect(steps.map((s) => s.order)).toEqual(['interleaved', 'sequential', 'sequential', 'sequential']);
  });

  it('stays interleaved on axis 0 where most do (2-bit, and 4-bit at 1.5x the scale)', () => {
    for (const engine of [run(2, 0, 1), run(4, 0, 1.5)]) {
      expect(engine.steps.every((s) => s.powerShare > 0.25)).toBe(true);
      expect(engine.steps.map((s) => s.order)).toEqual(['interleaved', 'interleaved', 'interleaved', 'interleaved']);
    }
  });

  it('is always interleaved on axis 1, where that is never slower, and still counts the share', () => {
    const few = run(4, 1, 1);
    expect(few.steps[0]!.powerShare).toBeLessThan(0.25);
    expect(few.steps.map((s) => s.order)).toEqual(['interleaved', 'interleaved', 'interleaved', 'interleaved']);
  });
});
