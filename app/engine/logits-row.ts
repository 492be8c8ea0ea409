import type { SessionOutputs } from './decoder-session.js';
import { GenerationError } from './engine-errors.js';
import { halfBitsToFloat32Into } from '../tensor/float16-bits.js';
import type { FloatHostTensor } from './host-tensor.js';

/**
 * Reads the last rows of `logits` [1, n, vocab] into a float32 buffer owned by the reader and reused
 * every step; fp16 logits are widened exactly. `read` gives the last row (the next-token scores),
 * `readRows` the last `rows` rows (scoring every token of a chunk).
 */
export class LogitsReader {
  readonly #name: string;
  #buffer: Float32Array = new Float32Array(0);
  #vocab = 0;

  constructor(name: string) {
    this.#name = name;
  }

  /** the vocabulary size of the last read (0 before the first) */
  get vocab(): number {
    return this.#vocab;
  }

  /** The last row, `[vocab]`; valid until the next read. */
  read(outputs: SessionOutputs): Float32Array {
    return this.readRows(outputs, 1);
  }

  /**
   * The last `rows` rows, `[rows, vocab]`; valid until the next read. Several float32 rows are a view
   * of the run's output, valid until its outputs are freed: an evaluation chunk's rows are a window's
   * worth of vocabularies (256 × 151,936 floats: 156 MB), and a copy held them twice (issue 23).
   */
  readRows(outputs: SessionOutputs, rows: number): Float32Array {
    const logits = this.#tensor(outputs);
    const dims = logits.dims;
    const vocab = dims[2]!;
    if (rows > dims[1]!) {
      throw new GenerationError(`\`${this.#name}\` has ${dims[1]} rows, but this step needs ${rows} (one per token fed).`,
        'Use an export whose num_logits_to_keep input (if any) keeps every row when asked to.');
    }
    const count = rows * vocab;
    this.#vocab = vocab;
    const offset = logits.data.length - count;
    if (rows > 1 && logits.type === 'float32') return logits.data.subarray(offset);
    if (this.#buffer.length !== count) this.#buffer = new Float32Array(count);
    if (logits.type === 'float32') this.#buffer.set(logits.data.subarray(offset));
    else halfBitsToFloat32Into(logits.data, offset, this.#buffer, 0, count);
    return this.#buffer;
  }

  #tensor(outputs: SessionOutputs): FloatHostTensor {
    const logits = outputs[this.#name];
    if (logits === undefined || (logits.type !== 'float32' && logits.type !== 'float16')) {
      throw new GenerationError(`the graph returned no float \`${this.#name}\` output.`, 'Use a causal-LM export that returns logits.');
    }
    const dims = logits.dims;
    const vocab = dims[dims.length - 1] ?? 0;
    if (dims.length !== 3 || dims[0] !== 1 || vocab === 0 || logits.data.length !== dims[1]! * vocab) {
      throw new GenerationError(`\`${this.#name}\` has shape [${dims.join(', ')}]; expected [1, sequence, vocab].`);
    }
    return logits;
  }
}
