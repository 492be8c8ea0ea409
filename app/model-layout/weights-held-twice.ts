import type { GraphHeader } from '../onnx/graph-header.js';

/** The ops whose float32 weight onnxruntime's CPU provider prepacks into a copy of its own (MLAS GEMM). */
const PREPACKED = new Set(['MatMul', 'Gemm']);

/**
 * Bytes of the float32 weights a CPU session holds twice: a MatMul/Gemm weight that another op also
 * reads, as a tied embedding is read by the input Gather and the LM head's Gemm. onnxruntime
 * prepacks the product's weight into a copy of its own and frees the original, unless another node
 * still needs it: then both stay resident. Measured on synthetic-qwen2.5-0.5b (tied, 151,936 × 896:
 * 0.51 GiB): its session holds 2.47 GiB with prepacking, 0.12 GiB without (the data file is mapped,
 * not read) for 1.84 GiB of weights; the untied synthetic-8b-kv-128k holds its weights once.
 */
export function weightsHeldTwiceBytes(header: GraphHeader): number {
  const initializers = new Map(header.initializers.map((tensor) => [tensor.name, tensor]));
  const prepacked = new Set<string>();
  const readOtherwise = new Set<string>();
  for (const node of header.nodes) {
    node.inputs.forEach((input, index) => {
      if (!initializers.has(input)) return;
      if (PREPACKED.has(node.opType) && node.domain === '' && index === 1) prepacked.add(input);
      else readOtherwise.add(input);
    });
  }
  let bytes = 0;
  for (const name of prepacked) {
    const tensor = initializers.get(name)!;
    if (readOtherwise.has(name) && tensor.type === 'float32') bytes += tensor.bytes;
  }
  return bytes;
}
