import { validateHqqParams } from '../quant/hqq/validate.js';
import { packedByteLength } from '../quant/hqq/bitpack.js';
import { groupLayout, paramCount } from '../quant/quanto/grouping.js';
import { packedRowCount } from '../quant/quanto/packing.js';
import { validateQuantoParams } from '../quant/quanto/params.js';
import type { QuantParams } from '../quant/types.js';
import type { KvDtype, KvShape } from '../tensor/kv-tensor.js';
import type { StoreBytes } from '../cache/layer-memory.js';


/** The backend settings one store is quantized with (K and V may differ in bits, and in axis). */
export interface StoreSettings {
  readonly backend: 'quanto' | 'hqq' | string;
  readonly nbits: number;
  readonly groupSize: number;
}

/**
 * The bytes a backend stores for a `[1, kvHeads, tokens, headDim]` tensor in `dtype`, computed from
 * its layout functions alone (nothing allocated): the layout the quantizer builds and
 * app/quant/types.ts `quantizedByteSize` counts.
 * - quanto: codes `[ceil(rows / (8 / bits)), cols]` bytes (packing.ts), scale and shift per group.
 * - HQQ: `packedByteLength(rows, cols, bits)` (bitpack.ts), scale and zero per group.
 * Throws the backend's QuantizationError where it refuses the shape, as a run would.
 */
export function storeBytes(settings: StoreSettings, axis: number, kvHeads: number, tokens: number, headDim: number, dtype: KvDtype): StoreBytes {
  const shape: KvShape = [1, kvHeads, tokens, headDim];
  const params: QuantParams = { nbits: settings.nbits, axis, groupSize: settings.groupSize };
  // quantizedByteSize: parameters are float16 for a float16 tensor, float32 otherwise
  const paramBytes = dtype === 'float16' ? 2 : 4;
  if (settings.backend === 'quanto') {
    const checked = validateQuantoParams(params);
    const layout = groupLayout(shape, checked.axis, checked.groupSize);
    return { codeBytes: packedRowCount(layout.rows, checked.nbits) * layout.cols, metadataBytes: 2 * paramCount(layout) * paramBytes };
  }
  if (settings.backend === 'hqq') {
    const grid = validateHqqParams(shape, params);
    return { codeBytes: packedByteLength(grid.rows, grid.cols, params.nbits), metadataBytes: 2 * grid.groups * paramBytes };
  }
  throw new Error(`Unknown backend ${JSON.stringify(settings.backend)}: choose quanto or hqq.`);
}
