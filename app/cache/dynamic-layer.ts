import { CacheError } from '../errors.js';
import type { KvTensor } from '../tensor/kv-tensor.js';
import type { CacheLayer, KvConcatenation, KvPair } from './cache-layer.js';
import { checkConcatenation } from './concatenation.js';
import { checkUpdate, geometryOf, type KvPairGeometry } from './kv-geometry.js';
import { EMPTY_LAYER_MEMORY, layerMemory, type LayerMemory } from './layer-memory.js';
import type { QuantizeEvent } from './quantize-event.js';
import { SeqBuffer } from './seq-buffer.js';

const NO_EVENTS: readonly QuantizeEvent[] = Object.freeze([]);

/** What the first update creates. */
interface DynamicState {
  readonly geometry: KvPairGeometry;
  /** [batch, kvHeads, seq, headDim] each */
  readonly keys: SeqBuffer;
  readonly values: SeqBuffer;
}

/**
 * transformers' `DynamicLayer`: full-precision keys and values, appended along seq on every update;
 * `update` returns the whole history (spec §1.3, the base class of `QuantizedLayer`).
 */
export class DynamicLayer implements CacheLayer {
  readonly kind = 'dynamic';
  #state: DynamicState | null = null;
  #disposed = false;

  get events(): readonly QuantizeEvent[] {
    return NO_EVENTS;
  }

  get flushCount(): number {
    return 0;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  update(key: KvTensor, value: KvTensor, concatenated?: KvConcatenation): KvPair {
    if (this.#disposed) throw new CacheError('This DynamicLayer was disposed; create a new cache to generate again.');
    const n = checkUpdate(key, value, this.#state?.geometry ?? null);
    const state = this.#state ?? this.#initialize(key, value);
    if (concatenated === undefined) {
      state.keys.append(key.data, n);
      state.values.append(value.data, n);
    } else {
      // Both checked before either is adopted, so a refused concatenation changes nothing.
      const seq = state.keys.seqLength;
      checkConcatenation(state.geometry.key, state.keys.view(), seq, key, concatenated.key, 'key');
      checkConcatenation(state.geometry.value, state.values.view(), seq, value, concatenated.value, 'value');
      state.keys.adoptConcatenation(concatenated.key, seq + n);
      state.values.adoptConcatenation(concatenated.value, seq + n);
    }
    return { key: state.keys.tensor(), value: state.values.tensor() };
  }

  seqLength(): number {
    return this.#state?.keys.seqLength ?? 0;
  }

  memory(): LayerMemory {
    const state = this.#state;
    if (state === null) return EMPTY_LAYER_MEMORY;
    return layerMemory({
      geometry: state.geometry,
      quantizedTokens: 0,
      fullPrecisionTokens: state.keys.seqLength,
      stores: [],
      workingBytes: state.keys.capacityBytes + state.values.capacityBytes,
    });
  }

  references(buffer: ArrayBufferLike): boolean {
    const state = this.#state;
    return state !== null && (state.keys.references(buffer) || state.values.references(buffer));
  }

  dispose(): void {
    this.#state?.keys.dispose();
    this.#state?.values.dispose();
    this.#state = null;
    this.#disposed = true;
  }

  #initialize(key: KvTensor, value: KvTensor): DynamicState {
    const geometry = { key: geometryOf(key), value: geometryOf(value) };
    const state = {
      geometry,
      keys: new SeqBuffer(geometry.key),
      values: new SeqBuffer(geometry.value),
    };
    this.#state = state;
    return state;
  }
}

