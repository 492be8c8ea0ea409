import type { GraphHeader } from '../onnx/graph-header.js';

/** What a graph computes in, read from its tensor types, never from its file name. */
export interface GraphPrecision {
  /** `fp32`, `fp16`, `bf16`, or a quantization scheme (`MatMulNBits blocks, fp16 otherwise`) */
  readonly weights: string;
  /** the KV inputs' type (`fp16`), null without KV inputs */
  readonly kv: string | null;
  readonly logits: string | null;
  /** `fp32 weights · fp16 KV · fp16 logits` */
  readonly summary: string;
}

/** Ops whose presence means the weights are stored quantized, and how to name that. */
const QUANTIZED_OPS: readonly (readonly [opType: string, scheme: string])[] = [
  ['MatMulNBits', 'MatMulNBits blocks'],
  ['GatherBlockQuantized', 'block-quantized embeddings'],
  ['MatMulBnb4', 'bnb4 blocks'],
  ['QLinearMatMul', 'QLinear int8'],
  ['MatMulInteger', 'dynamic int8 (MatMulInteger)'],
  ['DynamicQuantizeMatMul', 'dynamic int8'],
  ['DequantizeLinear', 'QDQ'],
];

const SHORT: Readonly<Record<string, string>> = { float32: 'fp32', float16: 'fp16', bfloat16: 'bf16', float64: 'fp64' };

export function shortTypeName(type: string): string {
  return SHORT[type] ?? type;
}

export function graphPrecision(header: GraphHeader, kvType: string | null, logitsType: string | null): GraphPrecision {
  const weights = weightPrecision(header);
  const kv = kvType === null ? null : shortTypeName(kvType);
  const logits = logitsType === null ? null : shortTypeName(logitsType);
  const summary = [`${weights} weights`, ...(kv === null ? [] : [`${kv} KV`]), ...(logits === null ? [] : [`${logits} logits`])].join(' · ');
  return { weights, kv, logits, summary };
}

function weightPrecision(header: GraphHeader): string {
  const bytesByType = new Map<string, number>();
  for (const initializer of header.initializers) bytesByType.set(initializer.type, (bytesByType.get(initializer.type) ?? 0) + initializer.bytes);
  const floats = [...bytesByType].filter(([type]) => type in SHORT).sort((a, b) => b[1] - a[1]);
  const floatName = floats.length === 0 ? null : shortTypeName(floats[0]![0]);
  const opTypes = new Set(header.nodes.map((node) => node.opType));
  const scheme = QUANTIZED_OPS.find(([opType]) => opTypes.has(opType));
  if (scheme !== undefined) {
    const integers = [...bytesByType].filter(([type]) => /^u?int(2|4|8)$/.test(type)).sort((a, b) => b[1] - a[1]);
    const storage = integers.length === 0 ? '' : ` (${integers[0]![0]})`;
    return `${scheme[1]}${storage}${floatName === null ? '' : `, ${floatName} otherwise`}`;
  }
  return floatName ?? 'none (no initializers)';
}
