import type { QuantBackend, Quantizer } from './types.js';
import { quantoQuantizer } from './quanto/quanto.js';
import { hqqQuantizer } from './hqq/hqq.js';

export const QUANT_BACKENDS: readonly QuantBackend[] = ['quanto', 'hqq'];

/** The quantizer behind a `QuantizedCache` backend name (case-sensitive, as in transformers). */
export function quantizerFor(backend: QuantBackend): Quantizer {
  switch (backend) {
    case 'quanto': return quantoQuantizer;
    case 'hqq': return hqqQuantizer;
    default: throw new Error(`Unknown quantization backend \`${String(backend)}\``);
  }
}
