import type { StateIo } from './decoder-io.js';
import type { SessionOutputs } from './decoder-session.js';
import { GenerationError } from './engine-errors.js';
import { floatTensor, type FloatHostTensor, type HostTensor } from './host-tensor.js';

/**
 * The non-KV cache states of a hybrid graph (conv, SSM, recurrent): zeros before the first step,
 * then each step's output fed back as the next step's input, untouched and at full precision.
 * kvscope quantizes KV layers only; these states are what the graph's own layers keep.
 */
export class StateFeeds {
  readonly #states: readonly StateIo[];
  readonly #current = new Map<string, FloatHostTensor>();

  constructor(states: readonly StateIo[]) {
    this.#states = states;
    for (const state of states) this.#current.set(state.input, initialState(state));
  }

  /** Adds every state input to `feeds`. */
  addFeeds(feeds: Record<string, HostTensor>): void {
    for (const [name, tensor] of this.#current) feeds[name] = tensor;
  }

  absorb(outputs: SessionOutputs): void {
    for (const state of this.#states) {
      const next = outputs[state.output];
      if (next === undefined || next.type !== state.type) {
        throw new GenerationError(
          `the graph returned ${next === undefined ? 'no' : `a ${next.type}`} \`${state.output}\` for the ${state.type} state \`${state.input}\`.`,
          'Use an export whose present states match their past inputs.',
        );
      }
      this.#current.set(state.input, next);
    }
  }

  references(buffer: ArrayBufferLike): boolean {
    for (const tensor of this.#current.values()) if (tensor.data.buffer === buffer) return true;
    return false;
  }

  dispose(): void {
    this.#current.clear();
  }
}

/** Zeros of the declared shape: batch (dim 0) is 1; any other symbolic dim is a length that starts at 0. */
function initialState(state: StateIo): FloatHostTensor {
  const dims = state.shape.map((dim, axis) => (typeof dim === 'number' ? dim : axis === 0 ? 1 : 0));
  const count = dims.reduce((a, b) => a * b, 1);
  return floatTensor(state.type, dims, state.type === 'float32' ? new Float32Array(count) : new Uint16Array(count));
}
