import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { goldenPath, hasShared, readNpyFile } from '../../node/golden.js';
import { kvTensor } from '../../tensor/kv-tensor.js';
import type { KvShape } from '../../tensor/kv-tensor.js';
import { errorStats } from '../error-stats.js';
import { quantizedByteSize } from '../types.js';
import { packCodes } from './bitpack.js';
import { hqqQuantizer, quantizeHqq } from './hqq.js';

/**
 * Golden parity against the real hqq 0.2.8.post1 run by transformers on CPU in float32
 * (../shared/golden, spec §6 item 4). Tolerances follow the golden README: scale bit-exact; at most
 * 1e-4 of the codes may differ, by ±1 (zero points come from float32 means whose order torch-sum.ts
 * reproduces, but kvscope's correctly rounded `pow` is one ulp from torch's SLEEF `pow` on ~2% of the
 * residuals, sleef-reference.test.ts); dequantized values within one quantization step; the optimizer
 * may stop one step apart.
 */
interface GoldenFile {
  readonly file: string;
  readonly shape: readonly number[];
}

interface GoldenCase {
  readonly id: string;
  readonly backend: string;
  readonly input: string;
  readonly params: { readonly nbits: number; readonly axis: number; readonly group_size: number };
  readonly files: Readonly<Record<'packed' | 'codes' | 'scale' | 'zero' | 'deq', GoldenFile>>;
  readonly library_meta: { readonly optimizer_steps_executed: number; readonly optimizer_step_mean_abs_err: readonly number[] };
  readonly rel_fro_err: number;
  readonly checks: { readonly small_range_fallback_groups?: readonly number[]; readonly inverse_scale_clamped_groups?: readonly number[] };
}

interface Manifest {
  readonly inputs: Readonly<Record<string, { readonly file: string; readonly shape: readonly number[] }>>;
  readonly cases: readonly GoldenCase[];
}

const shared = hasShared();
const manifest: Manifest | undefined = shared ? (JSON.parse(readFileSync(goldenPath('manifest.json'), 'utf8')) as Manifest) : undefined;
const cases = manifest?.cases.filter((c) => c.backend === 'hqq') ?? [];

function f32(file: GoldenFile): Float32Array {
  return readNpyFile(goldenPath(file.file)).data as Float32Array;
}

function u8(file: GoldenFile): Uint8Array {
  return readNpyFile(goldenPath(file.file)).data as Uint8Array;
}

const summary = { cases: 0, scaleExact: 0, codeMismatches: 0, codes: 0, stepsEqual: 0, trajectoriesExact: 0 };

describe.skipIf(!shared)('HQQ golden parity (../shared/golden; skipped when ../shared is absent)', () => {
  it('has the 36 hqq cases of the manifest', () => {
    expect(cases.length).toBe(36);
  });

  for (const golden of cases) {
    it(golden.id, () => {
      const input = manifest!.inputs[golden.input]!;
      const x = kvTensor(input.shape as unknown as KvShape, 'float32', f32(input));
      const { nbits, axis, group_size: groupSize } = golden.params;
      const { tensor, stepErrors } = quantizeHqq(x, { nbits, axis, groupSize });
      summary.cases++;

      // scale: bit-exact (meta["scale"] = 1/s with s from reciprocal(max − min)·max_v)
      const scale = f32(golden.files.scale);
      expect(tensor.paramShape).toEqual(golden.files.scale.shape);
      expect(Array.from(tensor.scale)).toEqual(Array.from(scale));
      summary.scaleExact++;

      // zero: float32 means, a few ULP at most
      const zero = f32(golden.files.zero);
      let worstZero = 0;
      for (let g = 0; g < zero.length; g++) worstZero = Math.max(worstZero, Math.abs(tensor.zero[g]! - zero[g]!) / Math.max(1, Math.abs(zero[g]!)));
      expect(worstZero).toBeLessThanOrEqual(1e-6);

      // codes: ≤ 1e-4 differ, each by ±1
      const codes = u8(golden.files.codes);
      expect(tensor.gridShape).toEqual(golden.files.codes.shape);
      const mine = hqqQuantizer.unpackCodes(tensor);
      let mismatches = 0;
      let worstCode = 0;
      for (let i = 0; i < codes.length; i++) {
        if (mine[i] === codes[i]) continue;
        mismatches++;
        worstCode = Math.max(worstCode, Math.abs(mine[i]! - codes[i]!));
      }
      expect(worstCode).toBeLessThanOrEqual(1);
      expect(mismatches).toBeLessThanOrEqual(1e-4 * codes.length);
      summary.codeMismatches += mismatches;
      summary.codes += codes.length;

      // packing: kvscope's packing of the golden codes is the library's packed bytes, byte for byte
      const packed = u8(golden.files.packed);
      const [rows, cols] = golden.files.codes.shape as [number, number];
      expect(Array.from(packCodes(codes, rows, cols, nbits))).toEqual(Array.from(packed));
      expect(tensor.packed.length).toBe(packed.length);
      expect(quantizedByteSize(tensor)).toBe(packed.length + 2 * scale.length * 4);

      // dequantized: within one quantization step (the group's scale) of the library's output
      const deq = f32(golden.files.deq);
      const out = hqqQuantizer.dequantize(tensor);
      expect(out.shape).toEqual(x.shape);
      let worstSteps = 0; // |mine − golden| in units of the group's quantization step
      for (let i = 0; i < deq.length; i++) {
        const group = axis === 1 ? Math.floor(i / groupSize) : i % (deq.length / groupSize);
        worstSteps = Math.max(worstSteps, Math.abs(out.data[i]! - deq[i]!) / scale[group]!);
      }
      expect(worstSteps).toBeLessThanOrEqual(1 + 1e-6);
      expect(errorStats(x.data, out.data).relFroErr).toBeCloseTo(golden.rel_fro_err, 4);

      // optimizer steps: at most one apart (early stopping compares float32 means)
      const steps = golden.library_meta.optimizer_steps_executed;
      expect(Math.abs(stepErrors.length - steps)).toBeLessThanOrEqual(1);
      if (stepErrors.length === steps) summary.stepsEqual++;
      const trajectory = golden.library_meta.optimizer_step_mean_abs_err.map((e) => Math.fround(e));
      if (trajectory.length === stepErrors.length && trajectory.every((e, i) => e === stepErrors[i])) summary.trajectoriesExact++;
      // the first step's error only depends on the initial parameters and the element formula
      expect(Math.abs(stepErrors[0]! - trajectory[0]!)).toBeLessThanOrEqual(1e-7 * trajectory[0]!);
    });
  }

  afterAll(() => {
    if (summary.cases === 0) return;
    console.info(
      `HQQ golden parity: scale bit-exact ${summary.scaleExact}/${summary.cases}; codes differing ${summary.codeMismatches}/${summary.codes}; ` +
      `optimizer step count equal ${summary.stepsEqual}/${summary.cases}; per-step errors bit-exact ${summary.trajectoriesExact}/${summary.cases}`,
    );
  });

  it('matches the step count in at least 34 of the 36 cases', () => {
    // runs after the per-case tests (vitest keeps declaration order within a file)
    expect(summary.cases).toBe(cases.length);
    expect(summary.stepsEqual).toBeGreaterThanOrEqual(cases.length - 2);
  });
});
