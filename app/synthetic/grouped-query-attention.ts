import type { GraphScope } from '../onnx/graph-builder.js';
import { intAttribute, intsAttribute } from '../onnx/attributes.js';
import { applyRotary, type RotaryTables } from './rotary-embedding.js';

export interface AttentionWeights {
  /** initializer names, [in, out] */
  readonly qProj: string;
  readonly kProj: string;
  readonly vProj: string;
  readonly oProj: string;
  /** Qwen2's q/k/v biases [out], added after each projection */
  readonly qBias?: string;
  readonly kBias?: string;
  readonly vBias?: string;
}

export interface AttentionGeometry {
  readonly numAttentionHeads: number;
  readonly numKeyValueHeads: number;
  readonly headDim: number;
}

export interface AttentionIo {
  /** normalized hidden states [batch, seq, hidden] */
  readonly x: string;
  /** [batch, kvHeads, past, headDim] graph inputs */
  readonly pastKey: string;
  readonly pastValue: string;
  /** names of the graph outputs to produce: [batch, kvHeads, past + seq, headDim] */
  readonly presentKey: string;
  readonly presentValue: string;
  readonly rotary: RotaryTables;
  /** [batch, 1, groupSize·seq, past + seq] from attentionBias */
  readonly bias: string;
}

/**
 * HF `LlamaAttention` with grouped-query attention, returning the o_proj output [batch, seq, hidden].
 *
 * The KV heads are never expanded. HF's `repeat_kv` gives query head h the KV head h / groupSize,
 * so the groupSize query heads of one KV head are adjacent: q [B, heads, S, d] reshapes for free to
 * [B, kvHeads, groupSize·S, d], and one MatMul per KV head against its keys [B, kvHeads, d, T] scores
 * all its query heads. An Optimum export instead Expands the cache to every query head each step,
 * which generation-speed.md measures at ~45% of the kernel time at 2k context.
 */
export function groupedQueryAttention(scope: GraphScope, io: AttentionIo, weights: AttentionWeights, geometry: AttentionGeometry): string {
  const g = scope.graph;
  const { numAttentionHeads: heads, numKeyValueHeads: kvHeads, headDim } = geometry;
  const toHeads = (x: string, projection: string, count: number, name: string, bias?: string): string => {
    const product = scope.at(name).op('MatMul', [x, projection]); // [B, S, count·d]
    const biased = bias === undefined ? product : scope.at(name).op('Add', [product, bias]);
    return scope.at(name).op('Reshape', [biased, g.int64([0, 0, count, headDim])]); // [B, S, count, d]
  };
  const headsFirst = [intsAttribute('perm', [0, 2, 1, 3])];

  const query = applyRotary(scope, toHeads(io.x, weights.qProj, heads, 'q_proj', weights.qBias), io.rotary); // [B, S, heads, d]
  const key = applyRotary(scope, toHeads(io.x, weights.kProj, kvHeads, 'k_proj', weights.kBias), io.rotary); // [B, S, kvHeads, d]
  const value = scope.op('Transpose', [toHeads(io.x, weights.vProj, kvHeads, 'v_proj', weights.vBias)], headsFirst); // [B, kvHeads, S, d]

  // 1/√d is a power of two for d = 64, so scaling q instead of the scores is exact, and cheaper
  const scaledQuery = scope.op('Mul', [query, g.float(1 / Math.sqrt(headDim))]);
  const groupedQuery = scope.op('Reshape', [
    scope.op('Transpose', [scaledQuery], headsFirst), // [B, heads, S, d]
    g.int64([0, kvHeads, -1, headDim]),
  ]); // [B, kvHeads, groupSize·S, d]

  const presentKey = scope.opNamed(io.presentKey, 'Concat', [io.pastKey, scope.op('Transpose', [key], headsFirst)], [intAttribute('axis', 2)]); // [B, kvHeads, T, d]
  const presentValue = scope.opNamed(io.presentValue, 'Concat', [io.pastValue, value], [intAttribute('axis', 2)]); // [B, kvHeads, T, d]

  // ORT fuses this Transpose into the MatMul (FusedMatMul transB) on CPU
  const keysTransposed = scope.op('Transpose', [presentKey], [intsAttribute('perm', [0, 1, 3, 2])]); // [B, kvHeads, d, T]
  const scores = scope.op('Add', [scope.op('MatMul', [groupedQuery, keysTransposed]), io.bias]); // [B, kvHeads, groupSize·S, T]
  const probabilities = scope.op('Softmax', [scores], [intAttribute('axis', -1)]);
  const context = scope.op('MatMul', [probabilities, presentValue]); // [B, kvHeads, groupSize·S, d]

  const merged = scope.op('Reshape', [
    scope.op('Transpose', [scope.op('Reshape', [context, g.int64([0, heads, -1, headDim])])], headsFirst), // [B, S, heads, d]
    g.int64([0, 0, heads * headDim]),
  ]); // [B, S, heads·d]
  return scope.at('o_proj').op('MatMul', [merged, weights.oProj]); // [B, S, hidden]
}
