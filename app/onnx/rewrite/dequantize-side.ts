import type { KvDtype } from '../../tensor/kv-tensor.js';
import { intAttribute, intsAttribute } from '../attributes.js';
import { OnnxDataType } from '../element-types.js';
import type { GraphEditor } from './graph-editor.js';
import { codesAreInt32Words, type InGraphSideSpec, type UnpackStrategy } from './in-graph-spec.js';
import { unpackCodes, unpackInt32Words } from './unpack-codes.js';

export interface SideDequantize {
  readonly editor: GraphEditor;
  /** node name prefix, e.g. `/kvscope/layers.3/key` */
  readonly scope: string;
  readonly side: InGraphSideSpec;
  readonly dtype: KvDtype;
  readonly unpack: UnpackStrategy;
  /** the graph's default-domain opset (DequantizeLinear takes a per-axis scale from opset 13) */
  readonly opset: number;
  /** graph inputs: packed codes (uint8), scale and zero (T) */
  readonly codes: string;
  readonly scale: string;
  readonly zero: string;
  /** an int64 `[1]` zero that exists only once the layer may start (layer-gate.ts); null: no gate */
  readonly gate: string | null;
}

export interface DequantizedSide {
  /** T, `[1, kvHeads, storeTokens, headDim]`: dequant(store) */
  readonly history: string;
  /** int64 `[1]`: storeTokens */
  readonly tokens: string;
}

/**
 * `dequant(store)`, `[1, kvHeads, storeTokens, headDim]` in T, computed from what the cache stores:
 * the history transformers' update puts in front of the residual and the new rows (spec §1.3).
 *
 * The arithmetic is the quantizers' own, op for op (spec §3.4; app/quant/quanto/scalar-dequantize.ts,
 * app/quant/hqq/dequantize.ts): quanto `y = scale·q − shift`, HQQ `y = (q − zero)·scale`, each op
 * rounded to T. float32 computes in float32. float16 computes each op in float32 and casts the result
 * to float16: the product of a binary16 scale and an integer code below 256 is exact in float32, and
 * for a sum or difference of two binary16 values float32 has at least 2·11 + 2 significand bits, so
 * rounding to float32 first and then to binary16 equals rounding once (Figueroa's double-rounding
 * theorem): bit for bit torch's half-precision ops, and ORT's Cast rounds to nearest even.
 * quanto's `scale·q` may run as DequantizeLinear (uint8 codes, per-axis scale, no zero point:
 * `(q − 0)·scale`, one float32 multiply, the same rounding), which saves a pass over the history.
 *
 * Shapes come from the inputs, so one graph serves every store length, the empty one of the prefill
 * included: rows (row layouts) or cols (column layouts) are read off the scale's shape.
 */
export function dequantizeSide(d: SideDequantize): DequantizedSide {
  const { editor: e, scope, side } = d;
  const { layout, rowsAreGroups } = gridLayout(side);
  const scaleShape = e.op(scope, 'Shape', [d.scale]);
  // rows of the grid (row layouts: one group per row) or its cols (column layouts), int64 [1]
  const varying = e.op(scope, 'Slice', [scaleShape, e.int64([rowsAreGroups ? 0 : 1]), e.int64([rowsAreGroups ? 1 : 2]), e.int64([0])]);
  const linear = dequantizeLinearAxis(d);
  const grid = codesAreInt32Words(side)
    ? unpackInt32Words({ editor: e, scope, packed: d.codes, gate: d.gate, rows: rowsAreGroups ? varying : e.int64([side.groupSize]) })
    : unpackCodes({
      editor: e, scope, packed: d.codes, gate: d.gate, nbits: side.nbits, strategy: d.unpack,
      order: side.backend === 'quanto' ? 'low-first' : 'high-first',
      rows: paddingRows(side) ? (rowsAreGroups ? varying : e.int64([side.groupSize])) : null,
      keepUint8: linear !== null,
    }); // [rows, cols]: float32, or uint8 for DequantizeLinear

  const scale = toFloat32(e, scope, d.scale, d.dtype);
  const zero = toFloat32(e, scope, d.zero, d.dtype);
  let values: string;
  if (side.backend === 'quanto') {
    const product = linear === null
      ? e.op(scope, 'Mul', [scale, grid])
      : e.op(scope, 'DequantizeLinear', [grid, e.op(scope, 'Reshape', [scale, e.int64([-1])])], [intAttribute('axis', linear)]);
    values = roundTo(e, scope, product, d.dtype, false); // scale·q
    values = roundTo(e, scope, e.op(scope, 'Sub', [values, zero]), d.dtype, true); // − shift
  } else {
    values = roundTo(e, scope, e.op(scope, 'Sub', [grid, zero]), d.dtype, false); // q − zero
    values = roundTo(e, scope, e.op(scope, 'Mul', [values, scale]), d.dtype, true); // · scale
  }

  // storeTokens = (rows·cols) / (kvHeads·headDim), where one of rows, cols is the group size
  const elements = e.op(scope, 'Mul', [varying, e.int64([side.groupSize])]);
  const tokens = e.op(scope, 'Div', [elements, e.int64([side.kvHeads * side.headDim])]);
  const historyShape = e.op(scope, 'Concat', [e.int64([1, side.kvHeads]), tokens, e.int64([side.headDim])], [intAttribute('axis', 0)]);
  if (layout === 'quanto-channels') {
    // ungroup (spec §3.1 step 5): Y.reshape(g, D, A).permute(2, 0, 1).reshape(B, H, S, D), A = cols / D
    const blocks = e.op(scope, 'Div', [varying, e.int64([side.headDim])]);
    const split = e.op(scope, 'Concat', [e.int64([side.groupSize, side.headDim]), blocks], [intAttribute('axis', 0)]);
    const byBlock = e.op(scope, 'Transpose', [e.op(scope, 'Reshape', [values, split])], [intsAttribute('perm', [2, 0, 1])]);
    return { history: e.op(scope, 'Reshape', [byBlock, historyShape]), tokens };
  }
  // quanto axis 0 and both HQQ axes keep the tensor's flat order in their grid
  return { history: e.op(scope, 'Reshape', [values, historyShape]), tokens };
}

/**
 * The grid axis DequantizeLinear can take quanto's scale along (per-axis scales need opset 13 and
 * uint8 codes, i.e. bitwise unpacking), or null to multiply instead. axis 0 has one scale per grid
 * row, except in the one-group edge case (N = g: a `[1, g]` scale, one per element, spec §3.1), which
 * cannot occur when kvHeads·headDim > g (every store then has N ≥ kvHeads·headDim > g); axis −1 has
 * one scale per grid column.
 */
function dequantizeLinearAxis(d: SideDequantize): number | null {
  const { side } = d;
  if (side.backend !== 'quanto' || d.unpack !== 'bitwise' || d.opset < 13) return null;
  if (side.axis === -1) return 1;
  return side.kvHeads * side.headDim > side.groupSize ? 0 : null;
}

/**
 * Whether quanto's packing can leave padding rows (rows not a multiple of k = 8 / bits: byte rows are
 * ceil(rows / k)). axis 0 has rows = N/g = seq·(kvHeads·headDim)/g; axis −1 has rows = g. HQQ's
 * packing requires rows to divide (spec §3.2 step 4), so it never pads.
 */
function paddingRows(side: InGraphSideSpec): boolean {
  if (side.backend !== 'quanto') return false;
  const fields = 8 / side.nbits;
  if (side.axis === -1) return side.groupSize % fields !== 0;
  return (side.kvHeads * side.headDim) % (side.groupSize * fields) !== 0;
}

type GridLayout = 'quanto-runs' | 'quanto-channels' | 'hqq-rows' | 'hqq-columns';

/** How the store's grid is cut (spec §3.1 step 1, §3.2 step 1) and whether its rows are the groups. */
function gridLayout(side: InGraphSideSpec): { layout: GridLayout; rowsAreGroups: boolean } {
  if (side.backend === 'quanto') {
    // axis 0: [N/g, g], scale [N/g, 1] (the one-group edge case's [1, g] scale also has N/g = 1 rows)
    return side.axis === 0 ? { layout: 'quanto-runs', rowsAreGroups: true } : { layout: 'quanto-channels', rowsAreGroups: false };
  }
  // axis 1: [N/g, g], scale [N/g, 1]; axis 0: [g, N/g], scale [1, N/g]
  return side.axis === 1 ? { layout: 'hqq-rows', rowsAreGroups: true } : { layout: 'hqq-columns', rowsAreGroups: false };
}

function toFloat32(e: GraphEditor, scope: string, value: string, dtype: KvDtype): string {
  return dtype === 'float32' ? value : e.op(scope, 'Cast', [value], [intAttribute('to', OnnxDataType.FLOAT)]);
}

/** float16: round a float32 result to binary16, and back to float32 unless it is the last op. */
function roundTo(e: GraphEditor, scope: string, value: string, dtype: KvDtype, last: boolean): string {
  if (dtype === 'float32') return value;
  const half = e.op(scope, 'Cast', [value], [intAttribute('to', OnnxDataType.FLOAT16)]);
  return last ? half : e.op(scope, 'Cast', [half], [intAttribute('to', OnnxDataType.FLOAT)]);
}
