/**
 * HQQ's block-planar bit packing (hqq `BitPack`, spec §3.2 step 4), along dim 0 of the `[rows, cols]`
 * code grid. Unlike quanto, the *first* block of rows goes into the *high* bits:
 *
 * - 8 bits: identity, `[rows, cols]` bytes.
 * - 4 / 2 / 1 bits: `planes = 8 / nbits`, `step = rows / planes` (rows must divide, see validate.ts);
 *   `P[r][c] = Σ_k Wq[r + k·step][c] << (8 − nbits·(k + 1))`: `[step, cols]` bytes.
 *   (4 bits: `Wq[r] << 4 | Wq[r + step]`; 2 bits: `<<6, <<4, <<2, <<0`; 1 bit: `<<7 … <<0`.)
 * - 3 bits: int32 words; rows are zero-padded to `rows10 = 10·ceil(rows / 10)`, `step = rows10 / 10`,
 *   `P[r][c] = Σ_{k<10} Wq[r + k·step][c] << (27 − 3k)`: `[step, cols]` int32 = `4·step·cols` bytes,
 *   stored little-endian in the Uint8Array.
 */
export function packedRowCount(rows: number, nbits: number): number {
  if (nbits === 3) return Math.ceil(rows / 10);
  return rows / (8 / nbits);
}

/** Bytes of the packed grid: `bits · rows · cols / 8` for 1/2/4/8 bits, `4 · ceil(rows/10) · cols` for 3. */
export function packedByteLength(rows: number, cols: number, nbits: number): number {
  return packedRowCount(rows, nbits) * cols * (nbits === 3 ? 4 : 1);
}

/** Packs a `[rows, cols]` code grid; for 8 bits the packing is the identity and `codes` itself is returned. */
export function packCodes(codes: Uint8Array, rows: number, cols: number, nbits: number): Uint8Array {
  if (nbits === 8) return codes;
  if (nbits === 3) return pack3(codes, rows, cols);
  const step = packedRowCount(rows, nbits);
  const planes = 8 / nbits;
  const out = new Uint8Array(step * cols);
  for (let k = 0; k < planes; k++) {
    const shift = 8 - nbits * (k + 1);
    const source = k * step * cols;
    for (let i = 0; i < out.length; i++) out[i]! |= codes[source + i]! << shift;
  }
  return out;
}

/** The `[rows, cols]` code grid of a packed one, always a new array. */
export function unpackCodes(packed: Uint8Array, rows: number, cols: number, nbits: number): Uint8Array {
  if (nbits === 8) return packed.slice();
  if (nbits === 3) return unpack3(packed, rows, cols);
  const step = packedRowCount(rows, nbits);
  const planes = 8 / nbits;
  const mask = (1 << nbits) - 1;
  const out = new Uint8Array(rows * cols);
  for (let k = 0; k < planes; k++) {
    const shift = 8 - nbits * (k + 1);
    const target = k * step * cols;
    for (let i = 0; i < step * cols; i++) out[target + i] = (packed[i]! >> shift) & mask;
  }
  return out;
}

function pack3(codes: Uint8Array, rows: number, cols: number): Uint8Array {
  const step = packedRowCount(rows, 3);
  const words = new Uint32Array(step * cols);
  for (let k = 0; k < 10; k++) {
    const shift = 27 - 3 * k;
    for (let r = 0; r < step; r++) {
      const row = r + k * step;
      if (row >= rows) break; // zero padding
      for (let c = 0; c < cols; c++) words[r * cols + c]! |= codes[row * cols + c]! << shift;
    }
  }
  return littleEndianBytes(words);
}

function unpack3(packed: Uint8Array, rows: number, cols: number): Uint8Array {
  const step = packedRowCount(rows, 3);
  const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
  const out = new Uint8Array(rows * cols);
  for (let r = 0; r < step; r++) {
    for (let c = 0; c < cols; c++) {
      const word = view.getUint32(4 * (r * cols + c), true);
      for (let k = 0; k < 10; k++) {
        const row = r + k * step;
        if (row < rows) out[row * cols + c] = (word >>> (27 - 3 * k)) & 7;
      }
    }
  }
  return out;
}

function littleEndianBytes(words: Uint32Array): Uint8Array {
  const bytes = new Uint8Array(words.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < words.length; i++) view.setUint32(4 * i, words[i]!, true);
  return bytes;
}
