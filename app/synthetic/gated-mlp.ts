import type { GraphScope } from '../onnx/graph-builder.js';

export interface MlpWeights {
  /** initializer names, [in, out] */
  readonly gateProj: string;
  readonly upProj: string;
  readonly downProj: string;
}

/**
 * HF `LlamaMLP`: down(silu(gate(x)) · up(x)), silu(z) = z·sigmoid(z) (opset 17 has no Silu op).
 * x: [batch, seq, hidden] → [batch, seq, hidden].
 */
export function gatedMlp(scope: GraphScope, x: string, weights: MlpWeights): string {
  const gate = scope.at('gate_proj').op('MatMul', [x, weights.gateProj]); // [B, S, intermediate]
  const up = scope.at('up_proj').op('MatMul', [x, weights.upProj]); // [B, S, intermediate]
  const activated = scope.at('act_fn').op('Mul', [gate, scope.at('act_fn').op('Sigmoid', [gate])]);
  return scope.at('down_proj').op('MatMul', [scope.op('Mul', [activated, up]), weights.downProj]); // [B, S, hidden]
}
