/**
 * Bit-exact comparison of float arrays: equal bit patterns, except that any NaN matches any NaN
 * (torch and WebAssembly do not promise a NaN's sign or payload). Returns a description of the first
 * mismatch and the mismatch count, or null when the arrays agree.
 */
export function firstBitMismatch(actual: Float32Array, expected: Float32Array): string | null {
  if (actual.length !== expected.length) return `length ${actual.length} vs ${expected.length}`;
  const a = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
  const e = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
  let count = 0;
  let first = -1;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === e[i] || (Number.isNaN(actual[i]) && Number.isNaN(expected[i]))) continue;
    if (first < 0) first = i;
    count++;
  }
  return first < 0 ? null : `${count} of ${a.length} differ; first at ${first}: ${actual[first]} vs ${expected[first]}`;
}

export function firstByteMismatch(actual: Uint8Array, expected: Uint8Array): string | null {
  if (actual.length !== expected.length) return `length ${actual.length} vs ${expected.length}`;
  let count = 0;
  let first = -1;
  for (let i = 0; i < actual.length; i++) {
    if (actual[i] === expected[i]) continue;
    if (first < 0) first = i;
    count++;
  }
  return first < 0 ? null : `${count} of ${actual.length} differ; first at ${first}: ${actual[first]} vs ${expected[first]}`;
}
