/**
 * Whether two float32 arrays hold the same bits, element for element (so -0 ≠ 0 and a NaN equals
 * the same NaN): the check that a logits row computed one way is the row computed another, exactly.
 */
export function sameBits(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}
