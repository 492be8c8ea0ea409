/**
 * What a quanto quantize kernel produces, in the library's storage layout (spec §3.1 step 4):
 * packed codes `[ceil(rows / (8 / bits)), cols]` bytes, and one scale and one shift per group
 * (`GroupLayout.paramShape`). Byte cost: `ceil(rows·bits / 8)·cols + 2·groups·sizeof(T)` (spec §3.6).
 */
export interface QuantoCodes {
  readonly packed: Uint8Array;
  readonly scale: Float32Array;
  readonly shift: Float32Array;
}
