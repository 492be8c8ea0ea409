import { QuantizationError } from '../../errors.js';
import { roundHalfEven } from '../../quant/rounding.js';
import type { QuantBackend, QuantParams, QuantizedTensor, Quantizer } from '../../quant/types.js';
import { elementCount, type KvTensor } from '../../tensor/kv-tensor.js';

/** The fake's store: a real-looking byte layout for memory accounting, plus the values it stands for. */
export interface FakeQuantizedTensor extends QuantizedTensor {
  /** [batch, kvHeads, seq, headDim] dequantized values */
  readonly values: Float32Array;
}

export interface FakeQuantizerOptions {
  /** grid spacing; default 1/8 */
  readonly gridStep?: number;
  /**
   * Shift the grid by half a step when the tensor's seq length is odd, so re-quantizing already
   * quantized values is NOT idempotent (like HQQ, spec §3.5) and a flush that skipped the
   * dequantize-then-requantize path would give different numbers.
   */
  readonly seqDependentGrid?: boolean;
  readonly backend?: QuantBackend;
}

/**
 * A stand-in quantizer for cache-logic tests (spec §6.1): rounds each value to a 1/8 grid (ties to
 * even). Its storage looks like quanto axis 0: `nbits·N/8` packed bytes and one scale and one zero
 * per contiguous group of `groupSize` values, so byte accounting can be checked by hand.
 * It records a copy of every tensor it is asked to quantize.
 */
export class FakeGridQuantizer implements Quantizer {
  readonly backend: QuantBackend;
  readonly #gridStep: number;
  readonly #seqDependentGrid: boolean;
  readonly calls = { quantize: 0, dequantize: 0, dequantizeInto: 0 };
  /** copies of the inputs of every `quantize` call, in order */
  readonly inputs: KvTensor[] = [];

  constructor(options: FakeQuantizerOptions = {}) {
    this.backend = options.backend ?? 'quanto';
    this.#gridStep = options.gridStep ?? 1 / 8;
    this.#seqDependentGrid = options.seqDependentGrid ?? false;
  }

  /** What `quantize` then `dequantize` gives for a tensor of this seq length, computed independently. */
  roundTrip(x: KvTensor): Float32Array {
    const phase = this.#seqDependentGrid && x.shape[2] % 2 === 1 ? 0.5 : 0;
    return x.data.map((v) => (roundHalfEven(v / this.#gridStep - phase) + phase) * this.#gridStep);
  }

  quantize(x: KvTensor, params: QuantParams): FakeQuantizedTensor {
    this.calls.quantize++;
    this.inputs.push({ shape: x.shape, dtype: x.dtype, data: x.data.slice() });
    const n = elementCount(x.shape);
    if (n === 0 || n % params.groupSize !== 0) {
      throw new QuantizationError(`Group size (${params.groupSize}) must be a divisor of (${n})`);
    }
    const groups = n / params.groupSize;
    return {
      backend: this.backend,
      params,
      shape: x.shape,
      dtype: x.dtype,
      gridShape: [groups, params.groupSize],
      packed: new Uint8Array(Math.ceil((n * params.nbits) / 8)),
      paramShape: [groups, 1],
      scale: new Float32Array(groups).fill(this.#gridStep),
      zero: new Float32Array(groups),
      values: this.roundTrip(x),
    };
  }

  dequantize(q: QuantizedTensor): KvTensor {
    this.calls.dequantize++;
    return { shape: q.shape, dtype: q.dtype, data: (q as FakeQuantizedTensor).values.slice() };
  }

  dequantizeInto(q: QuantizedTensor, out: Float32Array): void {
    this.calls.dequantizeInto++;
    out.set((q as FakeQuantizedTensor).values);
  }

  unpackCodes(q: QuantizedTensor): Uint8Array {
    return new Uint8Array(elementCount(q.shape));
  }
}
