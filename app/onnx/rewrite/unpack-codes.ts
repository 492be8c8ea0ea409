import { intAttribute, stringAttribute } from '../attributes.js';
import { OnnxDataType } from '../element-types.js';
import type { GraphEditor } from './graph-editor.js';
import type { UnpackStrategy } from './in-graph-spec.js';

/**
 * Unpacks a store's packed codes inside the graph, exactly as the libraries' `unpack` does
 * (packing runs along dim 0 of the `[rows, cols]` code grid, `k = 8 / bits` codes per byte):
 *
 * - quanto (`pack_weights`, spec §3.1 step 4): byte row r holds grid rows `r + i·rowDim` at bits
 *   `[bits·i, bits·(i+1))`: the first block of rows in the LOW bits; `rowDim = ceil(rows / k)`.
 * - HQQ (`BitPack`, spec §3.2 step 4): plane k at bits `[8 − bits·(k+1), 8 − bits·k)`: the first
 *   block of rows in the HIGH bits; `rows / k` byte rows exactly.
 *
 * Either way grid row block j is one bit field of every byte, so the grid is the Concat along
 * axis 0 of the fields in block order. Two exact ways to cut a field out of a byte p (0…255):
 * - `bitwise`: `(p << (8 − low − bits)) >> (8 − bits)` with BitShift on uint8 (opset 11; the left
 *   shift drops the higher fields, as uint8 arithmetic wraps), then one Cast to float;
 * - `arithmetic`: `floor(p / 2^low) − 2^bits · floor(p / 2^(low+bits))` in float32: every value is
 *   an integer below 256 and every divisor a power of two, so each Div, Floor, Mul and Sub is exact.
 * The result is the float32 code grid `[rows, cols]` (bitwise slices and casts once, on the uint8
 * grid, or hands the uint8 grid on with `keepUint8`).
 */
export interface UnpackInput {
  readonly editor: GraphEditor;
  readonly scope: string;
  /** uint8 `[byteRows, cols]` */
  readonly packed: string;
  readonly nbits: number;
  /** bit fields in grid-row order: quanto low bits first, HQQ high bits first */
  readonly order: 'low-first' | 'high-first';
  readonly strategy: UnpackStrategy;
  /** int64 `[1]`: keep only this many grid rows (quanto's padding rows dropped); null keeps all */
  readonly rows: string | null;
  /** bitwise only: return the uint8 grid uncast (for DequantizeLinear) */
  readonly keepUint8?: boolean;
  /**
   * int64 `[1]` zero the unpacking must wait for (layer-gate.ts), or null. It is added to the codes'
   * own shape and the codes are reshaped to it: a Reshape to the same shape, which ORT does without a
   * copy and which every EP runs on uint8 (WebGPU has no uint8 Slice, and would move the codes to the
   * CPU and back), but which cannot start before the gate exists.
   */
  readonly gate: string | null;
}

export function unpackCodes(input: UnpackInput): string {
  const { editor, scope, nbits, strategy } = input;
  const packed = input.gate === null
    ? input.packed
    : editor.op(scope, 'Reshape', [input.packed, editor.op(scope, 'Add', [editor.op(scope, 'Shape', [input.packed]), input.gate])]);
  const fields = 8 / nbits;
  // The low bit of each field, in grid-row block order.
  const lows = Array.from({ length: fields }, (_, block) => (input.order === 'low-first' ? nbits * block : 8 - nbits * (block + 1)));
  const planes = strategy === 'bitwise' ? bitwisePlanes(editor, scope, packed, nbits, lows) : arithmeticPlanes(editor, scope, packed, nbits, lows);
  let grid = planes.length === 1 ? planes[0]! : editor.op(scope, 'Concat', planes, [intAttribute('axis', 0)]);
  if (input.rows !== null) grid = editor.op(scope, 'Slice', [grid, editor.int64([0]), input.rows, editor.int64([0])]);
  if (strategy !== 'bitwise' || input.keepUint8 === true) return grid;
  return editor.op(scope, 'Cast', [grid], [intAttribute('to', OnnxDataType.FLOAT)]);
}

/** uint8 fields */
function bitwisePlanes(editor: GraphEditor, scope: string, packed: string, nbits: number, lows: readonly number[]): string[] {
  if (nbits === 8) return [packed];
  const left = [stringAttribute('direction', 'LEFT')];
  const right = [stringAttribute('direction', 'RIGHT')];
  return lows.map((low) => {
    const dropHigh = 8 - low - nbits;
    const aligned = dropHigh === 0 ? packed : editor.op(scope, 'BitShift', [packed, editor.uint8(dropHigh)], left);
    return editor.op(scope, 'BitShift', [aligned, editor.uint8(8 - nbits)], right);
  });
}

/** float32 fields */
function arithmeticPlanes(editor: GraphEditor, scope: string, packed: string, nbits: number, lows: readonly number[]): string[] {
  const bytes = editor.op(scope, 'Cast', [packed], [intAttribute('to', OnnxDataType.FLOAT)]);
  if (nbits === 8) return [bytes];
  // quotient[L] = floor(p / 2^L) for L = 0, bits, 2·bits, …, 8 (floor(floor(p/a)/b) = floor(p/(ab)))
  const quotient = new Map<number, string>([[0, bytes]]);
  const levels = 2 ** nbits;
  for (let low = nbits; low < 8; low += nbits) {
    quotient.set(low, editor.op(scope, 'Floor', [editor.op(scope, 'Div', [quotient.get(low - nbits)!, editor.float(levels)])]));
  }
  return lows.map((low) => {
    const above = quotient.get(low + nbits);
    const here = quotient.get(low)!;
    return above === undefined ? here : editor.op(scope, 'Sub', [here, editor.op(scope, 'Mul', [above, editor.float(levels)])]);
  });
}

/**
 * HQQ's 3-bit store (spec §3.2 step 4, app/quant/hqq/bitpack.ts): int32 words `[step, cols]`, grid row
 * `r + k·step` at bits `[27 − 3k, 30 − 3k)` of word row r, rows zero-padded to 10·step. The words are
 * below 2^30 (non-negative), so `floor(w / 2^(27−3k)) mod 8` is the field in int32 arithmetic (Div
 * truncates, which is floor here): exact on every EP, with no bit reinterpretation. The fields are
 * concatenated along axis 0 in k order and the padding rows sliced off: float32 `[rows, cols]`.
 */
export function unpackInt32Words(input: { readonly editor: GraphEditor; readonly scope: string; readonly packed: string; readonly gate: string | null; readonly rows: string }): string {
  const { editor, scope } = input;
  const packed = input.gate === null
    ? input.packed
    : editor.op(scope, 'Reshape', [input.packed, editor.op(scope, 'Add', [editor.op(scope, 'Shape', [input.packed]), input.gate])]);
  const eight = int32Scalar(editor, 8);
  const fields = Array.from({ length: 10 }, (_, k) => {
    const shift = 27 - 3 * k;
    const shifted = shift === 0 ? packed : editor.op(scope, 'Div', [packed, int32Scalar(editor, 2 ** shift)]);
    return editor.op(scope, 'Sub', [shifted, editor.op(scope, 'Mul', [editor.op(scope, 'Div', [shifted, eight]), eight])]);
  });
  const grid = editor.op(scope, 'Concat', fields, [intAttribute('axis', 0)]);
  const rows = editor.op(scope, 'Slice', [grid, editor.int64([0]), input.rows, editor.int64([0])]);
  return editor.op(scope, 'Cast', [rows], [intAttribute('to', OnnxDataType.FLOAT)]);
}

/** One int32 scalar initializer per value and graph. */
const int32Constants = new WeakMap<GraphEditor, Map<number, string>>();
function int32Scalar(editor: GraphEditor, value: number): string {
  let made = int32Constants.get(editor);
  if (made === undefined) int32Constants.set(editor, made = new Map());
  const existing = made.get(value);
  if (existing !== undefined) return existing;
  const name = editor.freshValueName(`/kvscope/const/int32{${value}}`);
  editor.initializer(name, [], Int32Array.of(value));
  made.set(value, name);
  return name;
}
