import type { GraphScope } from '../onnx/graph-builder.js';
import { OnnxDataType } from '../onnx/element-types.js';
import { intAttribute } from '../onnx/attributes.js';

/** cos and signed sin per position, [batch, seq, 1, headDim], shared by every layer's q and k. */
export interface RotaryTables {
  readonly cos: string;
  /** [-sin(θ₀…θ_{d/2-1}), sin(θ₀…θ_{d/2-1})]: rotate_half's minus sign folded in (see applyRotary) */
  readonly sinSigned: string;
}

/**
 * HF `LlamaRotaryEmbedding` for position_ids [batch, seq] (int64): inv_freq = 1 / θ^(2i/d), angles
 * = position · inv_freq, duplicated to cat(freqs, freqs) as HF does. inv_freq is computed by Pow in
 * the graph from exact exponents (ORT folds it at load), so the file holds no engine-dependent floats.
 */
export function rotaryTables(scope: GraphScope, positionIds: string, headDim: number, theta: number): RotaryTables {
  const g = scope.graph;
  const half = headDim / 2;
  // 2i/d for i < d/2: multiples of 1/32 for d = 64, exact in float32
  const exponents = g.initializer('/model/rotary_emb/exponents', [half], Float32Array.from({ length: half }, (_, i) => (2 * i) / headDim));
  const invFreq = scope.op('Reciprocal', [scope.op('Pow', [g.float(theta), exponents])]); // [d/2]

  const positions = scope.op('Cast', [positionIds], [intAttribute('to', OnnxDataType.FLOAT)]); // [B, S]
  const angles = scope.op('Mul', [scope.op('Unsqueeze', [positions, g.int64([-1])]), invFreq]); // [B, S, d/2]
  const cosHalf = scope.op('Cos', [angles]);
  const sinHalf = scope.op('Sin', [angles]);
  const cos = scope.op('Concat', [cosHalf, cosHalf], [intAttribute('axis', -1)]); // [B, S, d]
  const sinSigned = scope.op('Concat', [scope.op('Neg', [sinHalf]), sinHalf], [intAttribute('axis', -1)]); // [B, S, d]
  // [B, S, 1, d]: broadcasts over the heads of q/k laid out [B, S, heads, d]
  return {
    cos: scope.op('Unsqueeze', [cos, g.int64([2])]),
    sinSigned: scope.op('Unsqueeze', [sinSigned, g.int64([2])]),
  };
}

/**
 * HF `apply_rotary_pos_emb`: x·cos + rotate_half(x)·sin, rotate_half(x) = cat(-x₂, x₁).
 * With the sign moved into sinSigned this is x·cos + cat(x₂, x₁)·sinSigned: one Neg per forward pass
 * instead of one per layer and tensor. x: [batch, seq, heads, headDim] → same shape.
 */
export function applyRotary(scope: GraphScope, x: string, tables: RotaryTables): string {
  // opset 17 Split without a `split` input: equal halves
  const [first, second] = scope.ops('Split', [x], 2, [intAttribute('axis', -1)]) as [string, string];
  const swapped = scope.op('Concat', [second, first], [intAttribute('axis', -1)]);
  return scope.op('Add', [scope.op('Mul', [x, tables.cos]), scope.op('Mul', [swapped, tables.sinSigned])]);
}
