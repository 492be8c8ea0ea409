import type { QuantBackend } from '../../quant/types.js';
import type { KvDtype } from '../../tensor/kv-tensor.js';

/**
 * What the in-graph dequantization rewrite (in-graph-dequantize.ts) is asked to do: for each
 * quantized layer, how its keys and values are stored, so that the graph can unpack and dequantize
 * them exactly as kvscope's quantizers do (spec §3.1 quanto, §3.2 HQQ). Layers not listed keep their
 * past/present I/O as they are (dynamic layers of a layer policy).
 */
export interface InGraphDequantizeSpec {
  readonly layers: readonly InGraphLayerSpec[];
  /**
   * How codes are unpacked. `bitwise`: BitShift on the uint8 bytes (CPU; the cheapest); `arithmetic`:
   * floor division by powers of two in float32 (exact for bytes, and every EP has Div/Floor/Mul/Sub,
   * so WebGPU, CUDA or DirectML run the whole dequantization on the device). Both give the same codes.
   */
  readonly unpack: UnpackStrategy;
  /**
   * false leaves the layers ungated (ORT's own order decides when each history is built): only for
   * measuring what the gates save (bench/in-graph-memory.ts); runs always gate.
   */
  readonly gate?: boolean;
}

export type UnpackStrategy = 'bitwise' | 'arithmetic';

export interface InGraphLayerSpec {
  readonly layer: number;
  /** the source graph's names */
  readonly pastKey: string;
  readonly pastValue: string;
  readonly presentKey: string;
  readonly presentValue: string;
  /** T: the graph's KV dtype, which is also the dtype of stored scales and zeros (spec §3.4) */
  readonly dtype: KvDtype;
  readonly key: InGraphLayerSide;
  readonly value: InGraphLayerSide;
}

/** One stored tensor (keys or values of a layer): a transformers store, or a runtime's write-once rows. */
export type InGraphLayerSide = InGraphSideSpec | InGraphFormatSideSpec;

/**
 * A runtime's write-once rows (issue 27, app/cache/write-once-layer.ts; a kvscope extension): the
 * runtime's bytes cross as they are stored, uint8 `[tokens·kvHeads, rowBytes]`, with the per-tensor
 * fp32 scale, and are dequantized in the graph (dequantize-format-side.ts).
 */
export interface InGraphFormatSideSpec {
  readonly backend: 'runtime-format';
  /** a name from app/quant/runtime-formats/registry.ts that the graph path takes (GRAPH_FORMATS) */
  readonly format: string;
  readonly kvHeads: number;
  readonly headDim: number;
}

/** A transformers store's quantization, as `QuantParams` plus its fixed dims. */
export interface InGraphSideSpec {
  readonly backend: QuantBackend;
  readonly nbits: number;
  /** quanto 0 or -1; HQQ 0 or 1 (the library's own meaning) */
  readonly axis: number;
  readonly groupSize: number;
  readonly kvHeads: number;
  readonly headDim: number;
}

/** The names a rewritten layer's keys or values are fed and read under. */
export interface InGraphSideIo {
  /** uint8, the packed codes exactly as the store holds them: `[packedRows, cols]` */
  readonly codes: string;
  /** T, the store's scale in its `paramShape` (`[groups, 1]` or `[1, groups]`); runtime formats: float32 `[1]`, the per-tensor scale */
  readonly scale: string;
  /** T, quanto's shift or HQQ's zero, same shape as scale; null for runtime formats (they have none) */
  readonly zero: string | null;
  /** T, the full-precision residual rows `[1, kvHeads, residual, headDim]` */
  readonly residual: string;
  /** output, T: only this run's new rows `[1, kvHeads, new, headDim]` */
  readonly newRows: string;
}

export interface InGraphLayerIo {
  readonly layer: number;
  readonly key: InGraphSideIo;
  readonly value: InGraphSideIo;
  /**
   * Whether the layer's dequantization waits, by data dependency, for the previous layer's attention
   * to be over and for this layer's own new keys (values) to exist: then only one layer's dequantized
   * history is alive at a time (see layer-gate.ts); false where no safe dependency was found.
   */
  readonly gated: boolean;
  /**
   * Whether the values' dequantization also waits for the keys' attention weights (Optimum-style
   * attention: `MatMul(softmax(q·kᵀ), v)`), so the keys' history is freed before the values' is built:
   * one side's history in flight at a time (layer-gate.ts findAttentionWeights). false for fused
   * attention ops, which take keys and values in one node.
   */
  readonly valuesAfterKeys: boolean;
}

/** The rewritten graph's KV I/O, by layer (ascending); layers not listed keep the source's I/O. */
export interface InGraphKvIo {
  readonly layers: readonly InGraphLayerIo[];
}

/** Bumped whenever the rewrite emits a different graph for the same source and spec (the on-disk cache is keyed by it). */
export const IN_GRAPH_REWRITE_VERSION = 3;

/**
 * Why a stored tensor cannot be dequantized inside the graph, or null when it can. Everything else
 * the quantizers store is expressible: quanto 2/4 bits on both axes, HQQ 1/2/3/4/8 bits on both axes
 * (3 bits: the int32 words cross as an int32 tensor, as they are; codesAreInt32Words).
 */
export function inGraphUnsupportedReason(side: Pick<InGraphSideSpec, 'backend' | 'nbits' | 'axis'>): string | null {
  if (side.backend === 'quanto') {
    if (side.nbits !== 2 && side.nbits !== 4) return `quanto stores ${side.nbits}-bit codes nowhere (qint2 and qint4 only)`;
    if (side.axis !== 0 && side.axis !== -1) return `quanto has no axis ${side.axis}`;
    return null;
  }
  if (side.backend === 'hqq') {
    if (![1, 2, 3, 4, 8].includes(side.nbits)) return `HQQ stores no ${side.nbits}-bit codes`;
    if (side.axis !== 0 && side.axis !== 1) return `HQQ has no axis ${side.axis}`;
    return null;
  }
  return `the backend \`${String(side.backend)}\` is neither quanto nor hqq`;
}

/**
 * The feed shapes of an empty store (before the prefill), in the layout the graph reads: a grid with
 * no groups. Row layouts (quanto axis 0, HQQ axis 1: one group per grid row) have 0 rows of g codes;
 * column layouts (quanto axis −1, HQQ axis 0) have g code rows, packed, and 0 columns.
 */
export function emptyStoreShapes(side: Pick<InGraphSideSpec, 'backend' | 'nbits' | 'axis' | 'groupSize'>): { codes: [number, number]; params: [number, number] } {
  const rowsAreGroups = side.backend === 'quanto' ? side.axis === 0 : side.axis === 1;
  if (rowsAreGroups) return { codes: [0, side.groupSize], params: [0, 1] };
  if (codesAreInt32Words(side)) return { codes: [Math.ceil(side.groupSize / 10), 0], params: [1, 0] };
  const perByte = 8 / side.nbits;
  return { codes: [Math.ceil(side.groupSize / perByte), 0], params: [1, 0] };
}

/**
 * HQQ's 3-bit store: ten codes per little-endian int32 word (app/quant/hqq/bitpack.ts), `[ceil(rows / 10),
 * cols]` words. They cross into the graph as an int32 tensor over the same bytes (a typed-array view, no
 * copy and no reinterpretation inside ONNX), unpacked there by integer division (unpack-codes.ts).
 */
export function codesAreInt32Words(side: Pick<InGraphSideSpec, 'backend' | 'nbits'>): boolean {
  return side.backend === 'hqq' && side.nbits === 3;
}

/** A layer side that must be a transformers store (the store lanes and their tests); throws on a runtime format. */
export function storeSideOf(side: InGraphLayerSide): InGraphSideSpec {
  if (side.backend === 'runtime-format') throw new Error(`a runtime format (${side.format}) is not a transformers store: feed it through the format lane.`);
  return side;
}

/** A store side's zero input; throws for a runtime format's side, which has none. */
export function zeroInputOf(io: InGraphSideIo): string {
  if (io.zero === null) throw new Error('this side is a runtime format\'s rows and has no zero input.');
  return io.zero;
}
