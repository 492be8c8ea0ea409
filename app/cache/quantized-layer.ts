import { CacheError } from '../errors.js';
import type { QuantizedTensor, Quantizer } from '../quant/types.js';
import type { KvTensor } from '../tensor/kv-tensor.js';
import type { QuantizedCacheSettings } from './cache-config.js';
import type { CacheLayer, KvConcatenation, KvPair } from './cache-layer.js';
import { shouldFlush } from './flush-schedule.js';
import { checkUpdate, geometryOf, type KvPairGeometry } from './kv-geometry.js';
import { extensionMemory } from './extension-memory.js';
import { oneSideMemory, storeBytesOf } from './full-precision-side.js';
import { EMPTY_LAYER_MEMORY, layerMemory, type LayerMemory } from './layer-memory.js';
import { QuantizedHistory } from './quantized-history.js';
import { sideCodec, type LayerQuantization } from './quantization-plan.js';
import type { EncodedSide } from './side-codec.js';
import type { QuantizeEvent } from './quantize-event.js';

/** What the prefill creates. */
interface QuantizedState {
  readonly geometry: KvPairGeometry;
  readonly keys: QuantizedHistory;
  readonly values: QuantizedHistory;
}

/**
 * transformers' `QuantizedLayer` (spec §1.1, §1.3), with the backend's quantizer injected.
 *
 * - The prefill is quantized at once and returned unquantized: the very tensors passed in.
 * - Each later update returns `dequant(store) ++ residual ++ new`, of length `cumulative_length`.
 * - A flush (4-D residual and `residual + 1 >= residual_length`, tested before appending) quantizes
 *   that whole returned tensor again and empties the residual; otherwise the new tokens join the residual.
 *
 * Keys and values share nbits and group size and use their own axes, unless `quantization` (the
 * per-layer plan of kvscope's extensions, quantization-plan.ts) gives each side its own bits and
 * codec; the flush logic here is transformers' either way. The operations transformers
 * inherits from `DynamicLayer` and gets wrong for this layer (spec §1.4) throw `CacheError`.
 */
export class QuantizedLayer implements CacheLayer {
  readonly kind = 'quantized';
  readonly #quantizer: Quantizer;
  readonly #settings: QuantizedCacheSettings;
  readonly #quantization: LayerQuantization;
  #state: QuantizedState | null = null;
  /** `cumulative_length`: bumped first in every update */
  #cumulativeLength = 0;
  #updates = 0;
  /** false: the residual is the 1-D empty tensor (after the prefill and after each flush) */
  #residualIs4d = false;
  #residualTokens = 0;
  readonly #events: QuantizeEvent[] = [];
  #flushCount = 0;
  #failure: Error | null = null;
  #disposed = false;

  /** `quantization`: this layer's K and V plan; absent: transformers' (settings' nbits and axes, the backend alone) */
  constructor(quantizer: Quantizer, settings: QuantizedCacheSettings, quantization?: LayerQuantization) {
    if (settings.backend !== quantizer.backend) {
      throw new CacheError(
        `the cache settings ask for backend \`${settings.backend}\` but the quantizer given is \`${quantizer.backend}\`; ` +
        'pass the quantizer of the configured backend.',
      );
    }
    if (!Number.isInteger(settings.residualLength)) {
      throw new CacheError(`residual length must be an integer number of tokens, got ${settings.residualLength}.`);
    }
    this.#quantizer = quantizer;
    this.#settings = settings;
    const { nbits, groupSize } = settings;
    this.#quantization = quantization ?? {
      key: { params: { nbits, axis: settings.axisKey, groupSize }, extensions: null },
      value: { params: { nbits, axis: settings.axisValue, groupSize }, extensions: null },
    };
  }

  get events(): readonly QuantizeEvent[] {
    return this.#events;
  }

  get flushCount(): number {
    return this.#flushCount;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  /** What the last quantize call stored per side (the store plus the extensions' sink rows and outliers); null before the prefill. */
  get encoded(): { readonly key: EncodedSide | null; readonly value: EncodedSide | null } {
    return { key: this.#state?.keys.encoded ?? null, value: this.#state?.values.encoded ?? null };
  }

  /** The current quantized stores (`_quantized_keys`, `_quantized_values`), for inspection; null before the prefill. */
  get stores(): { readonly key: QuantizedTensor | null; readonly value: QuantizedTensor | null } {
    return { key: this.#state?.keys.store ?? null, value: this.#state?.values.store ?? null };
  }

  /**
   * `dequant(store)` of keys or values right after a quantize event (the prefill or a flush), exactly
   * what the next step's attention sees in front of its new token (spec §1.3); null at any other
   * time. A view of the layer's own buffer, valid until the next `update`: the layer dequantized the
   * new store once already (for the event's error), so a caller need not do it again.
   */
  dequantizedStore(part: 'key' | 'value'): KvTensor | null {
    const history = part === 'key' ? this.#state?.keys : this.#state?.values;
    return history?.dequantizedStore() ?? null;
  }

  /** `get_seq_length()`: the cumulative token count, not the stored rows (spec §1.3, consequence 5). */
  seqLength(): number {
    return this.#cumulativeLength;
  }

  update(key: KvTensor, value: KvTensor, concatenated?: KvConcatenation): KvPair {
    this.#assertUsable();
    // A refused shape changes nothing (transformers would fail later, inside torch.cat); nor does a refused concatenation.
    const n = checkUpdate(key, value, this.#state?.geometry ?? null);
    if (concatenated !== undefined && this.#state !== null) {
      this.#state.keys.checkConcatenation(key, concatenated.key, 'key');
      this.#state.values.checkConcatenation(value, concatenated.value, 'value');
    }
    this.#cumulativeLength += n; // §1.3: always the first action
    const step = this.#updates++;
    try {
      // The prefill returns its inputs and keeps no history, so a concatenation has nothing to save there.
      return this.#state === null ? this.#prefill(key, value, step) : this.#decode(this.#state, key, value, step, concatenated);
    } catch (error) {
      // Keys may be re-quantized and values not: the layer is half-updated, as transformers leaves it.
      this.#failure = error instanceof Error ? error : new Error(String(error));
      throw error;
    }
  }

  memory(): LayerMemory {
    const state = this.#state;
    if (state === null) return EMPTY_LAYER_MEMORY;
    const fullKey = this.#quantization.key.fullPrecision === true;
    const fullValue = this.#quantization.value.fullPrecision === true;
    if (fullKey !== fullValue) {
      // One side in full precision (the cache plan's `full` side): its rows are not sink rows of an extension.
      const quantized = fullKey ? state.values : state.keys;
      return oneSideMemory({
        geometry: state.geometry, quantized: fullKey ? 'value' : 'key', store: quantized.store === null ? null : storeBytesOf(quantized.store),
        quantizedTokens: quantized.storeTokens, residualTokens: this.#residualTokens,
        workingBytes: state.keys.workingBytes + state.values.workingBytes,
      });
    }
    const stores = [state.keys.store, state.values.store].filter((s): s is QuantizedTensor => s !== null);
    const extensions = extensionMemory(state.geometry, state.keys.encoded, state.values.encoded);
    return layerMemory({
      geometry: state.geometry,
      // sink rows are full precision: layerMemory counts them there
      quantizedTokens: state.keys.storeTokens - extensions.sinkTokens,
      fullPrecisionTokens: this.#residualTokens,
      stores,
      workingBytes: state.keys.workingBytes + state.values.workingBytes,
      extensions,
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

  /** Beam search's `reorder_cache`. */
  reorder(_beamIndices: ArrayLike<number>): never {
    throw unsupported('reorder_cache (beam search)', 'it index-selects only the full-precision residual while the quantized store keeps the old beam order, and raises right after a flush, when the residual is a 1-D empty tensor (PRs #45510, #48700)');
  }

  /** `crop(max_length)`, used by assisted decoding and contrastive search. */
  crop(_maxLength: number): never {
    throw unsupported('crop', 'it shortens only the full-precision residual and leaves the quantized store, and cumulative_length, as they were');
  }

  batchRepeatInterleave(_repeats: number): never {
    throw unsupported('batch_repeat_interleave', 'it expands only the full-precision residual, so the quantized store keeps the old batch size');
  }

  batchSelectIndices(_indices: ArrayLike<number>): never {
    throw unsupported('batch_select_indices', 'it selects only from the full-precision residual, so the quantized store keeps every batch row');
  }

  /** `reset()`: transformers zeroes the residual and the length but keeps the stale store, which the next update prepends. */
  reset(): never {
    throw unsupported('reset', 'it keeps the old quantized store and is_initialized=True, so the next update would prepend the previous sequence');
  }

  #prefill(key: KvTensor, value: KvTensor, step: number): KvPair {
    const geometry = { key: geometryOf(key), value: geometryOf(value) };
    const state: QuantizedState = {
      geometry,
      keys: new QuantizedHistory(sideCodec(this.#quantizer, this.#quantization.key), geometry.key),
      values: new QuantizedHistory(sideCodec(this.#quantizer, this.#quantization.value), geometry.value),
    };
    this.#state = state;
    this.#residualIs4d = false;
    this.#residualTokens = 0;
    const keyError = state.keys.quantize(key);
    const valueError = state.values.quantize(value);
    this.#events.push({ step, kind: 'prefill', tokens: key.shape[2], key: keyError, value: valueError });
    return { key, value };
  }

  #decode(state: QuantizedState, key: KvTensor, value: KvTensor, step: number, concatenated: KvConcatenation | undefined): KvPair {
    const keys = state.keys.extend(key, concatenated?.key);
    const values = state.values.extend(value, concatenated?.value);
    if (shouldFlush(this.#residualIs4d, this.#residualTokens, this.#settings.residualLength)) {
      const keyError = state.keys.requantize();
      const valueError = state.values.requantize();
      this.#residualIs4d = false;
      this.#residualTokens = 0;
      this.#flushCount++;
      this.#events.push({ step, kind: 'flush', tokens: state.keys.storeTokens, key: keyError, value: valueError });
    } else {
      this.#residualIs4d = true;
      this.#residualTokens += key.shape[2];
    }
    return { key: keys, value: values };
  }

  #assertUsable(): void {
    if (this.#disposed) throw new CacheError('This QuantizedLayer was disposed; create a new cache to generate again.');
    if (this.#failure !== null) {
      throw new CacheError(
        `This QuantizedLayer is unusable: an earlier update failed inside the ${this.#quantizer.backend} quantizer ` +
        `(${this.#failure.message}) and left it half-updated. Create a new cache with settings the backend accepts.`,
        { cause: this.#failure },
      );
    }
  }
}

function unsupported(operation: string, why: string): CacheError {
  return new CacheError(
    `QuantizedLayer does not support ${operation}: in transformers ${why}. ` +
    'kvscope refuses rather than reproduce that; use a dynamic (full-precision) cache for this decoding mode.',
  );
}
