import type { GraphScope } from '../onnx/graph-builder.js';
import { OnnxDataType } from '../onnx/element-types.js';
import { intAttribute } from '../onnx/attributes.js';

export interface AttentionBiasInputs {
  /** [batch, seq] int64: only its length is read */
  readonly inputIds: string;
  /** [batch, past + seq] int64, 1 = attend, 0 = padding */
  readonly attentionMask: string;
  /** [batch, kvHeads, past, headDim]: only its length is read. Every layer's past has this length. */
  readonly pastKey: string;
}

/** float32 `torch.finfo(float32).min`, what transformers adds at masked positions. */
const MASKED = -3.4028234663852886e38;

/**
 * The additive attention bias, 0 where a query may attend a key and float32 min where it may not,
 * built once per forward pass for each kind of layer:
 * - causal over cache positions: query i sits at cache index past + i and sees keys j ≤ past + i,
 *   so prefill (past 0), one-token decode and multi-token chunks on a non-empty past all work;
 * - padding: keys whose attention_mask is 0 are hidden (left padding, as HF);
 * - `slidingWindow` w: also j > (past + i) - w, transformers' `sliding_window_overlay`, i.e. the
 *   current token and the w - 1 before it.
 * A fully masked row (a padding query) gets equal scores, so softmax stays finite, as in HF.
 *
 * Returns [batch, 1, groupSize·seq, past + seq]: row r is query r mod seq, matching the grouped-query
 * layout of the scores (see groupedQueryAttention), and broadcasting over the KV heads.
 */
export function attentionBias(scope: GraphScope, inputs: AttentionBiasInputs, groupSize: number, slidingWindow: number | null): string {
  const g = scope.graph;
  const zero = g.int64([0], []);
  const one = g.int64([1], []);
  const sequenceLength = scope.op('Shape', [inputs.inputIds], [intAttribute('start', 1), intAttribute('end', 2)]); // [1]
  const pastLength = scope.op('Shape', [inputs.pastKey], [intAttribute('start', 2), intAttribute('end', 3)]); // [1]
  const totalLength = scope.op('Add', [pastLength, sequenceLength]); // [1]
  const squeeze = (value: string): string => scope.op('Squeeze', [value, g.int64([0])]); // [1] → scalar
  const queryPositions = scope.op('Unsqueeze', [
    scope.op('Range', [squeeze(pastLength), squeeze(totalLength), one]), // [S]
    g.int64([1]),
  ]); // [S, 1]
  const keyPositions = scope.op('Range', [zero, squeeze(totalLength), one]); // [T], broadcasts as [1, T]

  let allowed = scope.op('LessOrEqual', [keyPositions, queryPositions]); // [S, T]
  if (slidingWindow !== null) {
    const windowStart = scope.op('Sub', [queryPositions, g.int64([slidingWindow], [])]); // [S, 1]
    allowed = scope.op('And', [allowed, scope.op('Greater', [keyPositions, windowStart])]); // [S, T]
  }
  const keyNotPadding = scope.op('Unsqueeze', [
    scope.op('Cast', [inputs.attentionMask], [intAttribute('to', OnnxDataType.BOOL)]), // [B, T]
    g.int64([1, 2]),
  ]); // [B, 1, 1, T]
  allowed = scope.op('And', [allowed, keyNotPadding]); // [B, 1, S, T]
  const bias = scope.op('Where', [allowed, g.float(0), g.float(MASKED)]); // [B, 1, S, T]
  if (groupSize === 1) return bias;
  return scope.op('Tile', [bias, g.int64([1, 1, groupSize, 1])]); // [B, 1, groupSize·S, T]
}
