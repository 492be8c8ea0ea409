/**
 * An independent binary16 rounding for tests: every finite positive half value, sorted, and a binary
 * search for the nearest one (ties to the even bit pattern). It shares no code or trick with
 * app/tensor/float16.ts, so agreement between the two means something.
 */
const positiveHalves: Float64Array = (() => {
  const values = new Float64Array(0x7c00); // bit patterns 0x0000 … 0x7bff
  for (let bits = 0; bits < 0x7c00; bits++) {
    const exponent = bits >> 10;
    const mantissa = bits & 0x3ff;
    values[bits] = exponent === 0 ? mantissa / 1024 / 16384 : (1 + mantissa / 1024) * 2 ** (exponent - 15);
  }
  return values;
})();

export function halfByTable(x: number): number {
  if (Number.isNaN(x)) return x;
  const a = Math.abs(x);
  const sign = x < 0 || Object.is(x, -0) ? -1 : 1;
  if (a >= 65520) return sign * Infinity; // 65504 + half an ulp rounds to infinity
  let lo = 0;
  let hi = positiveHalves.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (positiveHalves[mid]! <= a) lo = mid;
    else hi = mid;
  }
  let pick: number;
  if (a >= positiveHalves[hi]!) pick = hi;
  else {
    const below = a - positiveHalves[lo]!;
    const above = positiveHalves[hi]! - a;
    pick = below < above ? lo : above < below ? hi : lo % 2 === 0 ? lo : hi;
  }
  return sign * positiveHalves[pick]!;
}

/** Every half value (as numbers), for drawing fp16-representable inputs. */
export function halfValue(bits: number): number {
  const magnitude = positiveHalves[bits & 0x7fff];
  if (magnitude === undefined) throw new RangeError(`0x${bits.toString(16)} is not a finite half`);
  return bits & 0x8000 ? -magnitude : magnitude;
}
