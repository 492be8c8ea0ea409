import type { GraphScope } from '../onnx/graph-builder.js';
import { intAttribute, intsAttribute } from '../onnx/attributes.js';

/**
 * HF `LlamaRMSNorm`: `weight * x / sqrt(mean(x², -1) + eps)`.
 * x: [batch, seq, hidden] → [batch, seq, hidden]. Spelled Pow → ReduceMean → Add → Sqrt → Div → Mul,
 * the pattern ORT's SimplifiedLayerNormFusion turns into one kernel on CPU.
 */
export function rmsNorm(scope: GraphScope, x: string, weight: string, eps: number): string {
  const g = scope.graph;
  const squared = scope.op('Pow', [x, g.float(2)]);
  // opset 17: axes is still an attribute (an input from opset 18)
  const meanSquare = scope.op('ReduceMean', [squared], [intsAttribute('axes', [-1]), intAttribute('keepdims', 1)]);
  const rms = scope.op('Sqrt', [scope.op('Add', [meanSquare, g.float(eps)])]);
  const normalized = scope.op('Div', [x, rms]);
  return scope.op('Mul', [normalized, weight]);
}
