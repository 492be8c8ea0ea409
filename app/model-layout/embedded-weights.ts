import type { GraphHeader } from '../onnx/graph-header.js';

/**
 * Initializers at least this large are read from the source `.onnx` in place by a derived graph
 * (app/node/onnx/source-backed-graph.ts), as onnx.save_model's size_threshold: smaller ones (shapes,
 * axes, scalars) stay inside the derived graph, where they cost nothing worth sharing.
 */
export const IN_PLACE_MIN_BYTES = 1024;

/**
 * Bytes of the weights stored inside the graph file itself (no external data), counting the
 * initializers a derived graph reads in place. A session that parses them copies them into its own
 * memory (measured: two unpacked sessions of the synthetic model, 91 MiB of embedded weights, add
 * 98 MiB of private memory), where external data is memory-mapped and shared between sessions.
 */
export function embeddedWeightsBytes(header: GraphHeader): number {
  let bytes = 0;
  for (const tensor of header.initializers) if (tensor.external === null && tensor.bytes >= IN_PLACE_MIN_BYTES) bytes += tensor.bytes;
  return bytes;
}
