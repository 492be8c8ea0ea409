import type { LayerMemory } from './layer-memory.js';

/**
 * The peak memory a decode run holds because of its KV cache (above what the same run holds after
 * a few tokens: weights, runtime, tokenizer), as the mechanism of each path puts it together. The
 * memory what-if shows it next to the stored bytes; bench/in-graph-memory.ts checks it against the
 * process's measured peak (ru_maxrss minus the same command's after 16 new tokens, under fixed heaps;
 * the cache first fills the baseline's own load transient, which the bench measures and subtracts).
 *
 * F is the full-precision K+V of every KV layer at the context length, in the graph's dtype: what a
 * dynamic cache stores. A decode step's peak is the moment its outputs have come back:
 *
 * - dynamic (transformers' DynamicCache, fed as present → past): the past held in JavaScript, the
 *   present ONNX Runtime wrote (its arena keeps the bytes), and the present copied out into
 *   JavaScript: 3·F.
 * - host (`--dequantize host`): the same three, the history now being the dequantized store plus
 *   the residual (the adopted present), plus the stores, plus each quantized layer's spare buffer
 *   of `dequant(store)` (QuantizedHistory: one history's worth): 4·F_q + 3·F_d + stores.
 * - graph (`--dequantize graph`): what transformers stores (codes, scale and zero, the residual's
 *   buffers), the flush scratch (one layer's history twice: FlushScratch), and inside ONNX Runtime one
 *   side of one layer at a time (a layer waits for the previous one, its values for its keys'
 *   attention weights: layer-gate.ts). That side's chain allocates its history in float32 four times
 *   in turn (dequantized, shifted, joined with the residual and the new rows, and the keys
 *   transposed for q·kᵀ), and ORT's arena holds what the chain took: 2 layers' K+V in float32 (bench
 *   `layers`, one step with the peak reset: 1.9 layers at 1k, 2k and 4k alike). Dynamic
 *   layers of a layer policy add their 3·F_d.
 */
export type PeakPath = 'dynamic' | 'host' | 'graph';

export interface KvPeakInput {
  readonly path: PeakPath;
  /** F: all KV layers' K+V at the context length in the graph's dtype (LayerMemory.fullPrecisionBytes of a dynamic cache) */
  readonly fullPrecisionBytes: number;
  /** the part of F that quantized layers hold (0 for dynamic) */
  readonly quantizedFullPrecisionBytes: number;
  /** quantized layers */
  readonly quantizedLayers: number;
  /** what the quantized layers store at the context length (codes, scale/zero, residual), summed */
  readonly stored: Pick<LayerMemory, 'codeBytes' | 'metadataBytes' | 'fullPrecisionBytes'>;
  /** the residual buffers' capacity of every quantized layer, K and V (graph), bytes */
  readonly residualCapacityBytes: number;
  /** bytes of one value of T (4 for float32, 2 for float16): the graph path dequantizes in float32 */
  readonly bytesPerValue: number;
}

export interface KvPeakPart {
  readonly label: string;
  readonly bytes: number;
}

export interface KvPeak {
  readonly bytes: number;
  readonly parts: readonly KvPeakPart[];
}

/** Layers' K+V histories (float32) ONNX Runtime holds at once on the graph path: one side's history, four times over (see above). */
export const GRAPH_LAYERS_IN_FLIGHT = 2;
/** FlushScratch keeps two one-side histories (history, check), grown by up to a quarter ahead. */
const FLUSH_SCRATCH_SIDES = 2 * 1.125;

export function predictKvPeak(input: KvPeakInput): KvPeak {
  const full = input.fullPrecisionBytes;
  const quantized = input.quantizedFullPrecisionBytes;
  const dynamic = full - quantized;
  const stores = input.stored.codeBytes + input.stored.metadataBytes;
  const parts: KvPeakPart[] = [];
  switch (input.path) {
    case 'dynamic':
      parts.push(
        { label: 'history fed as past (JavaScript)', bytes: full },
        { label: 'present written by ONNX Runtime', bytes: full },
        { label: 'present copied out (JavaScript)', bytes: full },
      );
      break;
    case 'host':
      parts.push(
        { label: 'dequantized history fed as past (JavaScript)', bytes: full },
        { label: 'spare dequant(store) buffers (JavaScript)', bytes: quantized },
        { label: 'present written by ONNX Runtime', bytes: full },
        { label: 'present copied out (JavaScript)', bytes: full },
        { label: 'quantized stores', bytes: stores },
      );
      break;
    case 'graph': {
      // one quantized layer's K+V history in float32
      const layerHistory = input.quantizedLayers === 0 ? 0 : (quantized / input.quantizedLayers) * (4 / input.bytesPerValue);
      parts.push(
        { label: 'quantized stores: codes, scale, zero', bytes: stores },
        { label: 'residual buffers', bytes: input.residualCapacityBytes },
        { label: 'flush scratch: one layer\'s history (JavaScript)', bytes: (FLUSH_SCRATCH_SIDES * layerHistory) / 2 },
        { label: 'one side of one layer dequantized inside ONNX Runtime', bytes: GRAPH_LAYERS_IN_FLIGHT * layerHistory },
        ...(dynamic > 0 ? [{ label: 'dynamic layers: past, present, copy', bytes: 3 * dynamic }] : []),
      );
      break;
    }
    default:
      throw new RangeError(`unknown path ${String(input.path)}`);
  }
  return { bytes: parts.reduce((sum, part) => sum + part.bytes, 0), parts };
}

/**
 * Rows a quantized layer's residual buffer holds at most with single-token steps (ResidualRows doubles
 * from one row): the first power of two ≥ residual_length − 1, the longest residual (spec §1.3).
 */
export function residualBufferRows(residualLength: number): number {
  const longest = Math.max(1, residualLength - 1);
  return 2 ** Math.ceil(Math.log2(longest));
}
