/** C's rint / WGSL's round on a float value: nearest integer, ties to even. Exact for any double. */
export function roundHalfEven(v: number): number {
  const floor = Math.floor(v);
  const rest = v - floor;
  if (rest > 0.5) return floor + 1;
  if (rest < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}
