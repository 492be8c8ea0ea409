/**
 * A deliberately plain re-derivation of optimum-quanto's KV quantization, written straight from the
 * spec (§3.1) and independent of the kernels it checks: it materializes the grouped 2-D grid, reduces,
 * quantizes, packs, unpacks and ungroups as separate steps, with its own half-to-even rounding and
 * Math.min/Math.max (IEEE minimum/maximum) reductions. `round` rounds to the tensor dtype.
 */
export interface ReferenceResult {
  readonly gridShape: [number, number];
  readonly paramShape: [number, number];
  /** [rows, cols] codes */
  readonly codes: Uint8Array;
  readonly scale: Float32Array;
  readonly shift: Float32Array;
  /** [ceil(rows / (8 / bits)), cols] */
  readonly packed: Uint8Array;
  /** flat, input order */
  readonly dequantized: Float32Array;
}

export function referenceQuanto(
  x: Float32Array,
  shape: readonly [number, number, number, number],
  bits: number,
  axis: 0 | -1,
  g: number,
  round: (v: number) => number,
): ReferenceResult {
  const [b, h, s, d] = shape;
  const n = b * h * s * d;
  // group(): grid[row][col] holds flat index gridIndex[row·cols + col]
  let rows: number;
  let cols: number;
  const gridIndex = new Int32Array(n);
  if (axis === 0) {
    rows = n / g;
    cols = g;
    for (let i = 0; i < n; i++) gridIndex[i] = i;
  } else {
    const a = (b * h * s) / g;
    rows = g;
    cols = d * a;
    for (let j = 0; j < g; j++) {
      for (let dd = 0; dd < d; dd++) {
        for (let aa = 0; aa < a; aa++) gridIndex[j * cols + dd * a + aa] = (aa * g + j) * d + dd;
      }
    }
  }
  const grid = new Float64Array(n);
  for (let i = 0; i < n; i++) grid[i] = x[gridIndex[i]!]!;

  // AffineOptimizer: a kept axis of size 1 means "axis = None": reduce over dim 0 (per column).
  const perRow = axis === 0 && rows !== 1;
  const paramCount = perRow ? rows : cols;
  const paramShape: [number, number] = perRow ? [rows, 1] : [1, cols];
  const qmax = 2 ** bits - 1;
  const scale = new Float32Array(paramCount);
  const shift = new Float32Array(paramCount);
  for (let p = 0; p < paramCount; p++) {
    let min = Infinity;
    let max = -Infinity;
    const members = perRow ? cols : rows;
    for (let m = 0; m < members; m++) {
      const v = perRow ? grid[p * cols + m]! : grid[m * cols + p]!;
      min = Math.min(min, v);
      max = Math.max(max, v);
    }
    scale[p] = round(round(max - min) / qmax);
    shift[p] = -min;
  }
  const paramOf = (row: number, col: number): number => (perRow ? row : col);

  const codes = new Uint8Array(n);
  for (let row = 0; row < rows; row++) {
    for (let col = 0; col < cols; col++) {
      const p = paramOf(row, col);
      const q = roundHalfToEven(round(round(grid[row * cols + col]! + shift[p]!) / scale[p]!));
      codes[row * cols + col] = Number.isNaN(q) ? 0 : Math.min(Math.max(q, 0), qmax); // torch's uint8 cast of NaN gave 0
    }
  }

  const perByte = 8 / bits;
  const rowDim = Math.ceil(rows / perByte);
  const packed = new Uint8Array(rowDim * cols);
  for (let r = 0; r < rowDim; r++) {
    for (let col = 0; col < cols; col++) {
      let byte = 0;
      for (let i = 0; i < perByte; i++) {
        const row = i * rowDim + r;
        if (row < rows) byte |= codes[row * cols + col]! << (bits * i);
      }
      packed[r * cols + col] = byte;
    }
  }

  // dequantize from the packed bytes, as the library does after unpack
  const dequantized = new Float32Array(n);
  for (let row = 0; row < rows; row++) {
    const r = row % rowDim;
    const i = Math.floor(row / rowDim);
    for (let col = 0; col < cols; col++) {
      const q = (packed[r * cols + col]! >> (bits * i)) & qmax;
      const p = paramOf(row, col);
      dequantized[gridIndex[row * cols + col]!] = round(round(scale[p]! * q) - shift[p]!);
    }
  }
  return { gridShape: [rows, cols], paramShape, codes, scale, shift, packed, dequantized };
}

function roundHalfToEven(v: number): number {
  if (!Number.isFinite(v)) return v;
  const floor = Math.floor(v);
  const fraction = v - floor;
  if (fraction > 0.5) return floor + 1;
  if (fraction < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}
