/**
 * torch.round is round-half-to-even; JavaScript's Math.round rounds halves up, which is wrong here
 * (spec §3). Adding and subtracting 2^52 + 2^51 makes the FPU round a double to an integer with ties
 * to even, exactly, for |x| < 2^51 (every float32 code value qualifies).
 */
const ROUND_MAGIC = 6755399441055744;

export function roundHalfEven(x: number): number {
  return (x + ROUND_MAGIC) - ROUND_MAGIC;
}
