/**
 * The one NaN-aware float comparison of the cache tests (STYLE.md §13). NaN matches NaN; a NaN
 * against a number is an infinite difference.
 */
export interface ArrayDifference {
  readonly maxAbs: number;
  /** first index holding maxAbs, -1 when no value differs */
  readonly at: number;
  /** ‖a − b‖_F / ‖b‖_F over the non-NaN pairs */
  readonly relFro: number;
}

export function arrayDifference(actual: ArrayLike<number>, expected: ArrayLike<number>): ArrayDifference {
  if (actual.length !== expected.length) {
    throw new RangeError(`lengths differ: actual ${actual.length}, expected ${expected.length}`);
  }
  let maxAbs = 0;
  let at = -1;
  let noise = 0;
  let signal = 0;
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i]!;
    const b = expected[i]!;
    const d = Number.isNaN(a) && Number.isNaN(b) ? 0 : Number.isNaN(a) || Number.isNaN(b) ? Infinity : Math.abs(a - b);
    if (d > maxAbs) {
      maxAbs = d;
      at = i;
    }
    if (Number.isFinite(d)) {
      noise += d * d;
      signal += b * b;
    }
  }
  return { maxAbs, at, relFro: signal === 0 ? Math.sqrt(noise) : Math.sqrt(noise / signal) };
}

/** Bit-exact equality (0 and -0 differ, NaN equals NaN): returns the first differing index or -1. */
export function firstBitDifference(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  if (actual.length !== expected.length) return Math.min(actual.length, expected.length);
  for (let i = 0; i < actual.length; i++) {
    if (!Object.is(actual[i], expected[i])) return i;
  }
  return -1;
}
