import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { CacheLayerPlan } from '../cache/layer-plan.js';
import type { LayerMemory } from '../cache/layer-memory.js';
import { ResidualRows } from '../cache/residual-rows.js';
import { WriteOnceLayer } from '../cache/write-once-layer.js';
import type { InGraphKvIo, InGraphSideIo } from '../onnx/rewrite/in-graph-spec.js';
import { runtimeFormat } from '../quant/runtime-formats/registry.js';
import type { RuntimeFormat } from '../quant/runtime-formats/types.js';
import { halfBitsToFloat32Into } from '../tensor/float16-bits.js';
import { kvTensor, type KvDtype, type KvTensor } from '../tensor/kv-tensor.js';
import type { DecoderIo, KvLayerIo } from './decoder-io.js';
import type { SessionOutputs } from './decoder-session.js';
import { PassThroughKvLane } from './dynamic-kv-lane.js';
import { GenerationError } from './engine-errors.js';
import type { LayerQuantizeError } from './generation-result.js';
import { floatTensor, uint8Tensor, type HostTensor } from './host-tensor.js';
import type { AbsorbResult, KvLane } from './kv-lane.js';
import { readPresent, type KvDims } from './kv-present.js';
import { copySlabRows } from './slab-rows.js';

/**
 * The in-graph lane for a runtime's write-once KV format (issue 27, point 3; a kvscope extension):
 * each quantized layer's rows cross into the graph as the runtime's bytes, uint8
 * `[tokens·kvHeads, rowBytes]` exactly as the WriteOnceLayer stores them, with the per-tensor fp32
 * scale; the rewritten graph dequantizes them (app/onnx/rewrite/dequantize-format-side.ts) and returns
 * only this run's new rows, which the layer encodes when it absorbs them. What attention sees is the
 * host path's `[deq(rows) | new rows]` (CacheKvLane over a WriteOnceLayer), computed in the graph bit
 * for bit, so logits agree bit for bit (tests: app/node/in-graph-format-generation.test.ts); no
 * dequantized history lives in JavaScript.
 *
 * `keepFullPrecision` is the reference replay on the same rewritten graph: no row is encoded, every
 * row is fed as the residual (the DynamicCache's history), the store stays empty.
 */
export interface FormatGraphLaneOptions {
  readonly io: DecoderIo;
  readonly kv: InGraphKvIo;
  readonly numLayers: number;
  readonly plan: readonly CacheLayerPlan[];
  readonly settings: QuantizedCacheSettings;
  readonly dims: ReadonlyMap<number, { readonly key: KvDims; readonly value: KvDims }>;
  readonly slidingWindows?: readonly (number | null)[];
  readonly keepFullPrecision?: boolean;
}

interface FormatSide {
  readonly io: InGraphSideIo;
  readonly dims: KvDims;
  readonly format: RuntimeFormat;
  readonly rowBytes: number;
  /** the reference replay's rows (keepFullPrecision), else null */
  readonly residual: ResidualRows | null;
}

interface FormatLayerLane {
  readonly layer: number;
  readonly cache: WriteOnceLayer;
  readonly key: FormatSide;
  readonly value: FormatSide;
}

export class FormatGraphKvLane implements KvLane {
  readonly #dtype: KvDtype;
  readonly #layers: FormatLayerLane[];
  readonly #passThrough: PassThroughKvLane;
  readonly #keepFullPrecision: boolean;
  #seq = 0;
  #runStart = 0;
  /** float32 `[kvHeads, n, headDim]` scratch for one side's new rows, reused */
  #scratch = new Float32Array(0);

  constructor(options: FormatGraphLaneOptions) {
    const { io, kv, plan, settings } = options;
    const keyName = settings.extensions?.kvFormatKey;
    const valueName = settings.extensions?.kvFormatValue;
    if (keyName === undefined || valueName === undefined) {
      throw new GenerationError('the format lane needs --kv-format-key and --kv-format-value.', 'Run transformers\' cache settings on the store lane (GraphKvLane).');
    }
    this.#dtype = io.kvDtype ?? 'float32';
    this.#keepFullPrecision = options.keepFullPrecision === true;
    const keyFormat = runtimeFormat(keyName);
    const valueFormat = runtimeFormat(valueName);
    const rewritten = new Map(kv.layers.map((layer) => [layer.layer, layer]));
    const dynamicLayers: KvLayerIo[] = [];
    this.#layers = io.kvLayers.flatMap((layerIo): FormatLayerLane[] => {
      const dims = options.dims.get(layerIo.layer)!;
      const inGraph = rewritten.get(layerIo.layer);
      if (plan[layerIo.layer] === 'quantized') {
        if (inGraph === undefined) {
          throw new GenerationError(`layer ${layerIo.layer} is quantized but the rewritten graph still takes its past as full-precision tensors.`,
            'Rewrite the graph for these cache settings (the in-graph cache is keyed by them), or run with --dequantize host.');
        }
        return [{
          layer: layerIo.layer,
          cache: new WriteOnceLayer(keyFormat, valueFormat, { calculateKvScales: settings.extensions?.calculateKvScales === true, keepDequantized: false }),
          key: this.#side(inGraph.key, dims.key, keyFormat, 'key'),
          value: this.#side(inGraph.value, dims.value, valueFormat, 'value'),
        }];
      }
      if (plan[layerIo.layer] !== 'dynamic' || inGraph !== undefined) {
        throw new GenerationError(`the cache plan says "${String(plan[layerIo.layer])}" for layer ${layerIo.layer}, which the graph has KV inputs for.`,
          'Check that config.json (layer_types) belongs to this graph.');
      }
      dynamicLayers.push(layerIo);
      return [];
    });
    this.#passThrough = new PassThroughKvLane({
      io: { ...io, kvLayers: dynamicLayers }, numLayers: options.numLayers, dims: options.dims,
      ...(options.slidingWindows === undefined ? {} : { slidingWindows: options.slidingWindows }),
    });
  }

  get seqLength(): number {
    return this.#seq;
  }

  addFeeds(feeds: Record<string, HostTensor>): number {
    this.#runStart = this.#seq;
    let bytes = this.#passThrough.addFeeds(feeds);
    for (const layer of this.#layers) bytes += this.#feedSide(feeds, layer, 'key') + this.#feedSide(feeds, layer, 'value');
    return bytes;
  }

  absorb(outputs: SessionOutputs, newTokens: number): AbsorbResult {
    this.#passThrough.absorb(outputs, newTokens);
    for (const layer of this.#layers) {
      if (this.#keepFullPrecision) {
        for (const part of ['key', 'value'] as const) {
          const rows = this.#rawRows(outputs, layer[part], newTokens);
          layer[part].residual!.append(rows, newTokens);
        }
        continue;
      }
      const key = this.#rows(outputs, layer.key, newTokens);
      // float16 rows are widened into the shared scratch: the keys' are copied before the values' land there
      const keyRows = key.data.buffer === this.#scratch.buffer ? kvTensor(key.shape, key.dtype, key.data.slice()) : key;
      layer.cache.append(keyRows, this.#rows(outputs, layer.value, newTokens));
    }
    this.#seq += newTokens;
    // Written once, never flushed; the graph dequantizes (encoding counts as the step's work).
    return { flushes: [], dequantizeMs: 0 };
  }

  memory(): (LayerMemory | null)[] {
    const memory = this.#passThrough.memory();
    for (const layer of this.#layers) {
      const own = layer.cache.memory();
      const residual = (layer.key.residual?.capacityBytes ?? 0) + (layer.value.residual?.capacityBytes ?? 0);
      memory[layer.layer] = { ...own, workingBytes: own.workingBytes + residual + this.#scratch.byteLength };
    }
    return memory;
  }

  /** Written once: no layer ever flushes (WriteOnceLayer.flushCount), as on the host path. */
  flushCounts(): (number | null)[] {
    const counts = this.#passThrough.flushCounts();
    for (const layer of this.#layers) counts[layer.layer] = layer.cache.flushCount;
    return counts;
  }

  /** No quantize events (WriteOnceLayer.events is empty), so no layer has a last error, as on the host path. */
  lastErrors(): (LayerQuantizeError | null)[] {
    return this.#passThrough.lastErrors();
  }

  references(buffer: ArrayBufferLike): boolean {
    return this.#passThrough.references(buffer);
  }

  dispose(): void {
    for (const layer of this.#layers) {
      layer.cache.dispose();
      layer.key.residual?.dispose();
      layer.value.residual?.dispose();
    }
    this.#passThrough.dispose();
    this.#scratch = new Float32Array(0);
  }

  #side(io: InGraphSideIo, dims: KvDims, format: RuntimeFormat, part: 'key' | 'value'): FormatSide {
    const rowBytes = format.rowBytes({ headDim: dims.headDim, dtype: this.#dtype, side: part });
    const residual = this.#keepFullPrecision ? new ResidualRows(this.#dtype, dims.kvHeads, dims.headDim) : null;
    return { io, dims, format, rowBytes, residual };
  }

  #feedSide(feeds: Record<string, HostTensor>, layer: FormatLayerLane, part: 'key' | 'value'): number {
    const s = layer[part];
    const { kvHeads, headDim } = s.dims;
    const stored = layer.cache.storedBytes(part) ?? new Uint8Array(0);
    const codes = uint8Tensor([stored.length / s.rowBytes, s.rowBytes], stored);
    const scale = floatTensor('float32', [1], Float32Array.of(layer.cache.tensorParams(part)?.tensorScale ?? 1));
    const residualTokens = s.residual?.tokens ?? 0;
    const residual = residualTokens === 0
      ? (this.#dtype === 'float16' ? floatTensor('float16', [1, kvHeads, 0, headDim], new Uint16Array(0)) : floatTensor('float32', [1, kvHeads, 0, headDim], new Float32Array(0)))
      : floatTensor(this.#dtype, [1, kvHeads, residualTokens, headDim], s.residual!.view());
    feeds[s.io.codes] = codes;
    feeds[s.io.scale] = scale;
    feeds[s.io.residual] = residual;
    return codes.data.byteLength + scale.data.byteLength + residual.data.byteLength;
  }

  /** This absorb's rows of a side's new-rows output, as the graph returned them (T), `[kvHeads, n, headDim]`. */
  #rawRows(outputs: SessionOutputs, s: FormatSide, newTokens: number): Float32Array | Uint16Array {
    const offset = this.#seq - this.#runStart;
    const { kvHeads, headDim } = s.dims;
    const length = outputs[s.io.newRows]?.dims[2];
    const runRows = typeof length === 'number' && offset + newTokens <= length ? length : offset + newTokens;
    const tensor = readPresent(outputs, s.io.newRows, this.#dtype === 'float16' ? 'float16' : 'float32', s.dims, runRows);
    if (runRows === newTokens) return tensor.data;
    const data = tensor.data instanceof Float32Array ? new Float32Array(kvHeads * newTokens * headDim) : new Uint16Array(kvHeads * newTokens * headDim);
    copySlabRows(tensor.data, runRows, offset, data, newTokens, 0, newTokens, kvHeads, headDim);
    return data;
  }

  /** The new rows as the float32 KvTensor the write-once layer encodes (float16 bits widened exactly). */
  #rows(outputs: SessionOutputs, s: FormatSide, newTokens: number): KvTensor {
    const raw = this.#rawRows(outputs, s, newTokens);
    const shape = [1, s.dims.kvHeads, newTokens, s.dims.headDim] as const;
    if (raw instanceof Float32Array) return kvTensor(shape, this.#dtype, raw);
    if (this.#scratch.length < raw.length) this.#scratch = new Float32Array(Math.max(raw.length, 2 * this.#scratch.length));
    const out = this.#scratch.subarray(0, raw.length);
    halfBitsToFloat32Into(raw, 0, out, 0, raw.length);
    return kvTensor(shape, this.#dtype, out);
  }
}
