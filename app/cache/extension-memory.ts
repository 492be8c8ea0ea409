import { outlierBytes } from '../quant/outliers.js';
import { bytesPerElement } from '../tensor/kv-tensor.js';
import type { KvGeometry, KvPairGeometry } from './kv-geometry.js';
import { slabCount } from './kv-geometry.js';
import { EMPTY_EXTENSION_MEMORY, type ExtensionMemory } from './layer-memory.js';
import type { EncodedSide } from './side-codec.js';

/**
 * The bytes the kvscope extensions hold in one layer, K and V together (layer-memory.ts), counted
 * from what the codecs stored: sink rows B·H·S·D values per side in T; per outlier a 4-byte position
 * and a value in T. Rotation stores nothing (the Hadamard matrix is implied by head_dim).
 * `sinkTokens` is one side's count: both sides cover the same tokens.
 */
export function extensionMemory(geometry: KvPairGeometry, key: EncodedSide | null, value: EncodedSide | null): ExtensionMemory {
  if (key === null || value === null) return EMPTY_EXTENSION_MEMORY;
  const keySide = sideMemory(geometry.key, key);
  const valueSide = sideMemory(geometry.value, value);
  return {
    sinkTokens: key.sinkTokens,
    sinkBytes: keySide.sinkBytes + valueSide.sinkBytes,
    outliers: keySide.outliers + valueSide.outliers,
    outlierIndexBytes: keySide.outlierIndexBytes + valueSide.outlierIndexBytes,
    outlierValueBytes: keySide.outlierValueBytes + valueSide.outlierValueBytes,
  };
}

function sideMemory(geometry: KvGeometry, encoded: EncodedSide): Omit<ExtensionMemory, 'sinkTokens'> {
  const valueBytes = bytesPerElement(geometry.dtype);
  const outliers = encoded.outliers?.indices.length ?? 0;
  const bytes = outlierBytes(outliers, valueBytes);
  return {
    sinkBytes: slabCount(geometry) * encoded.sinkTokens * geometry.headDim * valueBytes,
    outliers,
    outlierIndexBytes: bytes.indexBytes,
    outlierValueBytes: bytes.valueBytes,
  };
}
