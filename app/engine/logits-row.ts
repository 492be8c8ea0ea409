import type { SessionOutputs } from './decoder-session.js';
import { GenerationError } from './engine-errors.js';
import { halfBitsToFloat32Into } from '../tensor/float16-bits.js';

/**
 * Reads the last row of `logits` [1, n, vocab] (the next-token scores) into a float32 buffer owned by
 * the reader and reused every step; fp16 logits are widened exactly.
 */
export class LogitsReader {
  readonly #name: string;
  #row: Float32Array = new Float32Array(0);

  constructor(name: string) {
    this.#name = name;
  }

  /** The row; valid until the next `read`. */
  read(outputs: SessionOutputs): Float32Array {
    const logits = outputs[this.#name];
    if (logits === undefined || (logits.type !== 'float32' && logits.type !== 'float16')) {
      throw new GenerationError(`the graph returned no float \`${this.#name}\` output.`, 'Use a causal-LM export that returns logits.');
    }
    const dims = logits.dims;
    const vocab = dims[dims.length - 1] ?? 0;
    if (dims.length !== 3 || dims[0] !== 1 || vocab === 0 || logits.data.length !== dims[1]! * vocab) {
      throw new GenerationError(`\`${this.#name}\` has shape [${dims.join(', ')}]; expected [1, sequence, vocab].`);
    }
    if (this.#row.length !== vocab) this.#row = new Float32Array(vocab);
    const offset = logits.data.length - vocab;
    if (logits.type === 'float32') this.#row.set(logits.data.subarray(offset));
    else halfBitsToFloat32Into(logits.data, offset, this.#row, 0, vocab);
    return this.#row;
  }
}
