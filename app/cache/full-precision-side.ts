import { quantizedByteSize, type QuantizedTensor } from '../quant/types.js';
import { bytesPerElement } from '../tensor/kv-tensor.js';
import { slabCount, type KvPairGeometry } from './kv-geometry.js';
import { layerMemory, type LayerMemory, type StoreBytes } from './layer-memory.js';
import type { SideCodec } from './side-codec.js';

/**
 * The codec of a side the cache plan keeps in full precision while the layer's other side is
 * quantized (a kvscope extension: a layer map's `nbits_value: full`, the lab's keys-only targets).
 * Its rows are kept exactly, as the extensions' sink rows are (`store` null, every row a sink row),
 * so QuantizedLayer's flush schedule runs unchanged for the quantized side and this side's history is
 * bit for bit what a DynamicLayer would return. A flush copies the history once, as a quantize call would read it.
 */
export function fullPrecisionCodec(): SideCodec {
  return {
    encode: (x) => ({ tokens: x.shape[2], store: null, sinkTokens: x.shape[2], sink: x.data.slice(), outliers: null, rotation: null }),
    decodeInto: (encoded, out) => {
      if (encoded.sink !== null) out.set(encoded.sink);
    },
  };
}

export interface OneSideMemoryParts {
  readonly geometry: KvPairGeometry;
  /** the quantized side */
  readonly quantized: 'key' | 'value';
  /** its store's bytes (null before a quantize call): `storeBytesOf` a real store, or the what-if's arithmetic */
  readonly store: StoreBytes | null;
  /** tokens its store covers, and its residual */
  readonly quantizedTokens: number;
  readonly residualTokens: number;
  readonly workingBytes: number;
}

/**
 * A layer with one side quantized and the other in full precision: the quantized side's codes and
 * scale/zero, its residual in T, and the other side's whole history in T (B·H·tokens·D·bytes(T)).
 */
/** A real store's bytes, as layerMemory counts them. */
export function storeBytesOf(store: QuantizedTensor): StoreBytes {
  return { codeBytes: store.packed.byteLength, metadataBytes: quantizedByteSize(store) - store.packed.byteLength };
}

export function oneSideMemory(parts: OneSideMemoryParts): LayerMemory {
  const { geometry, store, quantizedTokens, residualTokens } = parts;
  const tokens = quantizedTokens + residualTokens;
  const quantizedWidth = geometry[parts.quantized].headDim;
  const exactWidth = geometry[parts.quantized === 'key' ? 'value' : 'key'].headDim;
  const codeBytes = store?.codeBytes ?? 0;
  const storeBytes = codeBytes + (store?.metadataBytes ?? 0);
  const fullPrecisionBytes = slabCount(geometry.key) * (quantizedWidth * residualTokens + exactWidth * tokens) * bytesPerElement(geometry.key.dtype);
  const counts = layerMemory({ geometry, quantizedTokens, fullPrecisionTokens: residualTokens, stores: [], workingBytes: parts.workingBytes });
  return { ...counts, codeBytes, metadataBytes: storeBytes - codeBytes, fullPrecisionBytes, totalBytes: storeBytes + fullPrecisionBytes };
}
