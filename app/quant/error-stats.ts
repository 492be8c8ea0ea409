/**
 * Quantization error of one tensor against its reconstruction, accumulated in float64 as the golden
 * manifest computes `rel_fro_err`, `max_abs_err` and `mean_abs_err`.
 */
export interface ErrorStats {
  /** ‖x − x̂‖_F / ‖x‖_F (0 when both are zero) */
  readonly relFroErr: number;
  readonly maxAbsErr: number;
  readonly meanAbsErr: number;
  /** 10·log10(‖x‖² / ‖x − x̂‖²); Infinity for an exact reconstruction */
  readonly snrDb: number;
}

export function errorStats(reference: Float32Array, reconstruction: Float32Array): ErrorStats {
  if (reference.length !== reconstruction.length) {
    throw new RangeError(`error statistics need equal lengths, got ${reference.length} and ${reconstruction.length}`);
  }
  let signal = 0;
  let noise = 0;
  let maxAbs = 0;
  let sumAbs = 0;
  for (let i = 0; i < reference.length; i++) {
    const x = reference[i]!;
    const d = x - reconstruction[i]!;
    const a = Math.abs(d);
    signal += x * x;
    noise += d * d;
    sumAbs += a;
    if (a > maxAbs) maxAbs = a;
  }
  const n = reference.length;
  return {
    relFroErr: signal === 0 ? (noise === 0 ? 0 : Infinity) : Math.sqrt(noise / signal),
    maxAbsErr: maxAbs,
    meanAbsErr: n === 0 ? 0 : sumAbs / n,
    snrDb: noise === 0 ? Infinity : 10 * Math.log10(signal / noise),
  };
}
