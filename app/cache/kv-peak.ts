import type { LayerMemory } from './layer-memory.js';
import { grownResidualRows } from './residual-rows.js';

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
 *   buffers), the flush scratch, and what ONNX Runtime's arena holds for the one side of one layer
 *   it dequantizes at a time (a layer waits for the previous one, its values for its keys' attention
 *   weights: layer-gate.ts). Measured on synthetic-8b-kv (RSS split per step into ArrayBuffers, V8's
 *   heap and native memory, 16 → 4,096 tokens): the ArrayBuffers were the stores, the residual
 *   buffers and the scratch's reserved bytes exactly; resident were the stores, the residual and, of
 *   the scratch, the two one-side histories a flush writes (history and check: one layer's K+V; the
 *   quarter of headroom it reserves is never touched, so never resident); native memory grew by
 *   1.27–1.44 layers' K+V in float32 (at 1k, 2k, 4k), while one step of a fresh session takes 1.9
 *   (bench `layers`: the arena's first extension; later steps reuse its chunks). ONNX Runtime's part
 *   stays resident between steps (the arena keeps it), so no step rose above the RSS before it:
 *   the peak is the sum. What is left out: V8's heap drifting by 3–9 MiB, and a flush that grows the
 *   scratch (every few residual cycles) holding the replaced pair until the next GC. Dynamic layers of
 *   a layer policy add their 3·F_d.
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
  /** the residual buffers' capacity of every quantized layer, K and V, at the context length (graph), bytes */
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

/**
 * Layers' K+V histories (float32) one step of a fresh graph session takes inside ONNX Runtime at
 * most: the chain of one side of one layer allocates its history four times in turn (dequantized,
 * shifted, joined with the residual and the new rows, the keys transposed for q·kᵀ). Bench `layers`
 * checks one step against it: the proof that one side of one layer is dequantized at a time.
 */
export const GRAPH_LAYERS_IN_FLIGHT = 2;
/**
 * What ONNX Runtime's arena holds, in layers' K+V histories (float32), over a decode run on the graph
 * path: 1.27–1.44 measured at 1k–4k (see above), taken as 1.5 so that the what-if does not promise
 * less than the arena may keep when chunk sizes fall worse; below GRAPH_LAYERS_IN_FLIGHT because
 * later steps reuse the chunks the first one took.
 */
export const GRAPH_DECODE_ARENA_LAYERS = 1.5;
/** The resident part of FlushScratch: the two one-side histories a flush writes (history, check), one layer's K+V. */
const FLUSH_SCRATCH_LAYERS = 1;

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
        { label: 'flush scratch: one layer\'s history (JavaScript)', bytes: FLUSH_SCRATCH_LAYERS * layerHistory },
        { label: 'ONNX Runtime\'s arena: one side of one layer dequantized at a time', bytes: GRAPH_DECODE_ARENA_LAYERS * layerHistory },
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
 * Rows a quantized layer's residual buffer holds after `decodeTokens` single-token steps: the residual
 * starts empty (the prefill is quantized whole, spec §1.3) and grows to residual_length − 1 rows
 * at most, one row a step, by ResidualRows' own growth; a flush keeps the capacity. Without
 * `decodeTokens`, the most it ever holds.
 */
export function residualBufferRows(residualLength: number, decodeTokens = Number.POSITIVE_INFINITY): number {
  const longest = Math.max(1, Math.min(decodeTokens, residualLength - 1));
  let rows = 0;
  while (rows < longest) rows = grownResidualRows(rows, rows + 1);
  return rows;
}
