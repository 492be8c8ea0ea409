import { flushSchedule } from '../../app/cache/flush-schedule.js';
import type { LayerMemory } from '../../app/cache/layer-memory.js';
import type { StepMetrics } from '../../app/engine/types.js';
import { RingColumns } from './ring-columns.js';

/** Per-step columns of a run, one row per step (step 0 = prefill); bytes sum every layer. */
export const STEP_COLUMNS = [
  'step', 'seqLength', 'tokenId',
  'codeBytes', 'metadataBytes', 'fullPrecisionBytes', 'totalBytes', 'fp16BaselineBytes', 'fp32BaselineBytes', 'materializedKvBytes',
  /** kvscope's JavaScript buffers for the cache (history, dequantized stores, capacity included) */
  'workingBytes',
  'rssBytes', 'externalBytes', 'arrayBuffersBytes',
  'tokensPerSecond', 'dequantizeMs', 'modelMs', 'quantizeMs',
  /** 0 without the reference lane */
  'referenceMs',
  /** what the measured parts leave of the step (sampling, detokenizing, bookkeeping), ≥ 0 */
  'otherMs',
  'totalMs',
  /** 'flush' events in this step, over all layers */
  'flushEvents',
  /** NaN without the reference lane */
  'klDivergence', 'top1Agrees', 'referenceTokenId',
  /** the process's resident memory when the step was measured (sampled at most every 250 ms) */
  'rssBytes',
] as const;
export type StepColumn = (typeof STEP_COLUMNS)[number];

/** Figures kept per layer in `layerBytes`. */
export const LAYER_FIELDS = 6;

/** Steps a ring holds at most; longer runs keep their latest steps (the totals below stay exact). */
export const MAX_STEP_CAPACITY = 1 << 17;
/** Columns of the layer × flush error heatmap; more flushes than this share a column (the max is kept). */
export const MAX_HEATMAP_COLUMNS = 96;

export interface RunMetricsOptions {
  /** decoder layers (the length of every step's `kvBytes`) */
  readonly layerCount: number;
  /** steps the run will make at most (max new tokens); fixes the charts' x axes */
  readonly expectedSteps: number;
  /** the quantized cache's residual length, to predict the flush count; null for a dynamic cache */
  readonly residualLength: number | null;
  /** bytes per full-precision value in the model's KV dtype (4 float32, 2 float16) */
  readonly kvBytesPerValue: number;
  /** ring capacity; default: expectedSteps (capped by MAX_STEP_CAPACITY) */
  readonly capacity?: number;
}

/**
 * The columnar store one run's metrics stream into, outside React (STYLE.md §11): the API's
 * `onMetrics` handler calls `append`, which only writes typed arrays, and charts read it on
 * animation frames when `version` has moved. Nothing here notifies anyone.
 */
export class RunMetrics {
  readonly layerCount: number;
  readonly expectedSteps: number;
  readonly residualLength: number | null;
  readonly kvBytesPerValue: number;
  readonly steps: RingColumns<StepColumn>;
  /** bumped by every append; readers compare it with the version they drew */
  version = 0;
  /** bumped whenever a heatmap cell changes (a quantize event): the heatmaps redraw only then */
  heatmapVersion = 0;
  /** per step (index = step), the text its token completed, when the run streamed it (StepMetrics.text) */
  readonly stepTexts: (string | undefined)[] = [];
  hasStepText = false;

  /** `[layer × LAYER_FIELDS]`: codes, metadata, full precision, fp16 baseline, fp32 baseline, fed to the graph (NaN: as stored) of the latest step */
  readonly layerBytes: Float64Array;
  /** per layer, the window of a sliding layer counted as transformers keeps it (0: none) */
  readonly layerWindow: Int32Array;
  /** 1 where the layer reported a KV cache in the latest step */
  readonly layerHasKv: Uint8Array;
  /** relative Frobenius error of each layer's latest quantize event (NaN: none yet) */
  readonly latestKeyError: Float64Array;
  readonly latestValueError: Float64Array;
  /** 'flush' events per layer (the prefill's quantize is not a flush, as in GenerationResult.flushCounts) */
  readonly flushCounts: Int32Array;
  /** `[layer × columns]` max relative error per heatmap column, K and V (NaN: no event) */
  heatmapKey: Float32Array = new Float32Array(0);
  heatmapValue: Float32Array = new Float32Array(0);
  heatmapColumns = 0;
  /** quantize events a layer will see (prefill + predicted flushes); heatmap column = event · columns / this */
  heatmapEvents = 0;
  /** per heatmap column, the first and last step of the events it holds (-1: none yet) */
  heatmapFirstStep: Int32Array = new Int32Array(0);
  heatmapLastStep: Int32Array = new Int32Array(0);
  /** per heatmap column, the ordinals of the first and last event it holds (0 = the prefill) */
  heatmapFirstEvent: Int32Array = new Int32Array(0);
  heatmapLastEvent: Int32Array = new Int32Array(0);

  #eventOrdinal: Int32Array;
  #flushSteps = new Int32Array(64);
  #flushStepCount = 0;
  #promptLength: number | null = null;
  #valuesPerToken = 0;
  #agree = 0;
  #referenceSteps = 0;
  #klSum = 0;
  #klMax = 0;
  #firstDisagreement: number | null = null;

  constructor(options: RunMetricsOptions) {
    this.layerCount = options.layerCount;
    this.expectedSteps = Math.max(1, options.expectedSteps);
    this.residualLength = options.residualLength;
    this.kvBytesPerValue = options.kvBytesPerValue;
    const capacity = options.capacity ?? Math.min(this.expectedSteps, MAX_STEP_CAPACITY);
    this.steps = new RingColumns(STEP_COLUMNS, Math.max(1, capacity));
    this.layerBytes = new Float64Array(this.layerCount * LAYER_FIELDS);
    this.layerWindow = new Int32Array(this.layerCount);
    this.layerHasKv = new Uint8Array(this.layerCount);
    this.latestKeyError = new Float64Array(this.layerCount).fill(NaN);
    this.latestValueError = new Float64Array(this.layerCount).fill(NaN);
    this.flushCounts = new Int32Array(this.layerCount);
    this.#eventOrdinal = new Int32Array(this.layerCount);
  }

  /** The hot path: one metrics batch from the engine. */
  append(batch: readonly StepMetrics[]): void {
    for (const step of batch) this.#appendStep(step);
    this.version++;
  }

  get stepCount(): number {
    return this.steps.total;
  }

  get promptLength(): number | null {
    return this.#promptLength;
  }

  /** Steps that had at least one residual flush, ascending (for the timeline markers). */
  flushSteps(): Int32Array {
    return this.#flushSteps.subarray(0, this.#flushStepCount);
  }

  /** Flushes per quantized layer: equal in every quantized layer; null before any layer flushed or quantized. */
  flushesPerLayer(): number | null {
    let value: number | null = null;
    for (let layer = 0; layer < this.layerCount; layer++) {
      if (this.#eventOrdinal[layer] === 0) continue; // never quantized
      value = Math.max(value ?? 0, this.flushCounts[layer]!);
    }
    return value;
  }

  totalFlushes(): number {
    let sum = 0;
    for (const count of this.flushCounts) sum += count;
    return sum;
  }

  /** Reference lane summary so far (null without the lane). */
  reference(): { steps: number; meanKl: number; maxKl: number; top1Agreement: number; firstDisagreement: number | null } | null {
    if (this.#referenceSteps === 0) return null;
    return {
      steps: this.#referenceSteps,
      meanKl: this.#klSum / this.#referenceSteps,
      maxKl: this.#klMax,
      top1Agreement: this.#agree / this.#referenceSteps,
      firstDisagreement: this.#firstDisagreement,
    };
  }

  /**
   * An upper bound on the cache's bytes at the last expected step (every value in full precision),
   * for a memory axis that does not move while streaming. null before the prefill arrived.
   */
  projectedFullPrecisionBytes(): number | null {
    if (this.#promptLength === null) return null;
    const tokens = this.#promptLength + this.expectedSteps - 1;
    return this.#valuesPerToken * tokens * Math.max(2, this.kvBytesPerValue);
  }

  projectedFp16Bytes(): number | null {
    if (this.#promptLength === null) return null;
    return this.#valuesPerToken * (this.#promptLength + this.expectedSteps - 1) * 2;
  }

  #appendStep(step: StepMetrics): void {
    if (this.#promptLength === null) this.#start(step);
    const row = this.steps.nextRow();
    const c = this.steps.columns;
    let codes = 0;
    let metadata = 0;
    let fullPrecision = 0;
    let total = 0;
    let fp16 = 0;
    let fp32 = 0;
    let working = 0;
    const layers = Math.min(step.kvBytes.length, this.layerCount);
    for (let layer = 0; layer < layers; layer++) {
      const memory = step.kvBytes[layer];
      const base = layer * LAYER_FIELDS;
      if (memory === null || memory === undefined) {
        this.layerHasKv[layer] = 0;
        continue;
      }
      codes += memory.codeBytes;
      metadata += memory.metadataBytes;
      fullPrecision += memory.fullPrecisionBytes;
      total += memory.totalBytes;
      fp16 += memory.fp16BaselineBytes;
      fp32 += memory.fp32BaselineBytes;
      working += memory.workingBytes;
      this.layerHasKv[layer] = 1;
      this.layerBytes[base] = memory.codeBytes;
      this.layerBytes[base + 1] = memory.metadataBytes;
      this.layerBytes[base + 2] = memory.fullPrecisionBytes;
      this.layerBytes[base + 3] = memory.fp16BaselineBytes;
      this.layerBytes[base + 4] = memory.fp32BaselineBytes;
      this.layerBytes[base + 5] = memory.fedBytes ?? NaN;
      this.layerWindow[layer] = memory.windowTokens ?? 0;
    }
    let flushEvents = 0;
    for (const event of step.flushes) {
      if (event.layer < 0 || event.layer >= this.layerCount) continue;
      if (event.kind === 'flush') {
        flushEvents++;
        this.flushCounts[event.layer]!++;
      }
      this.latestKeyError[event.layer] = event.key.relFroErr;
      this.latestValueError[event.layer] = event.value.relFroErr;
      this.#recordHeatmap(event.layer, event.key.relFroErr, event.value.relFroErr, step.step);
    }
    if (flushEvents > 0) this.#pushFlushStep(step.step);

    c.step[row] = step.step;
    c.seqLength[row] = step.seqLength;
    c.tokenId[row] = step.tokenId;
    c.codeBytes[row] = codes;
    c.metadataBytes[row] = metadata;
    c.fullPrecisionBytes[row] = fullPrecision;
    c.totalBytes[row] = total;
    c.fp16BaselineBytes[row] = fp16;
    c.fp32BaselineBytes[row] = fp32;
    c.materializedKvBytes[row] = step.materializedKvBytes;
    c.workingBytes[row] = working;
    c.rssBytes[row] = step.memory.rssBytes;
    c.externalBytes[row] = step.memory.externalBytes;
    c.arrayBuffersBytes[row] = step.memory.arrayBuffersBytes;
    c.tokensPerSecond[row] = step.tokensPerSecond;
    const t = step.timings;
    c.dequantizeMs[row] = t.dequantizeMs;
    c.modelMs[row] = t.modelMs;
    c.quantizeMs[row] = t.quantizeMs;
    c.referenceMs[row] = t.referenceMs ?? 0;
    // the step's remainder, so that the parts add up to its whole time (clock reads round to 0.1 µs)
    c.otherMs[row] = Math.max(0, t.totalMs - t.dequantizeMs - t.modelMs - t.quantizeMs - (t.referenceMs ?? 0));
    c.totalMs[row] = t.totalMs;
    this.stepTexts[step.step] = step.text;
    if (step.text !== undefined) this.hasStepText = true;
    c.flushEvents[row] = flushEvents;
    c.rssBytes[row] = step.memory.rssBytes;
    const reference = step.reference;
    if (reference === undefined) {
      c.klDivergence[row] = NaN;
      c.top1Agrees[row] = NaN;
      c.referenceTokenId[row] = NaN;
    } else {
      c.klDivergence[row] = reference.klDivergence;
      c.top1Agrees[row] = reference.top1Agrees ? 1 : 0;
      c.referenceTokenId[row] = reference.referenceTokenId;
      this.#referenceSteps++;
      this.#klSum += reference.klDivergence;
      if (reference.klDivergence > this.#klMax) this.#klMax = reference.klDivergence;
      if (reference.top1Agrees) this.#agree++;
      else if (this.#firstDisagreement === null) this.#firstDisagreement = step.step;
    }
  }

  /** The prefill fixes what the axes need: prompt length, values per token, the flush count to expect. */
  #start(step: StepMetrics): void {
    const promptLength = Math.max(1, step.seqLength);
    this.#promptLength = promptLength;
    let values = 0;
    for (const memory of step.kvBytes) if (memory !== null && memory.tokens > 0) values += memory.valueCount / memory.tokens;
    this.#valuesPerToken = values;
    const flushes = this.residualLength === null ? 0 : flushSchedule(promptLength, this.residualLength, this.expectedSteps - 1, 1).flushSteps.length;
    this.heatmapEvents = flushes + 1;
    this.heatmapColumns = Math.min(MAX_HEATMAP_COLUMNS, this.heatmapEvents);
    this.heatmapKey = new Float32Array(this.layerCount * this.heatmapColumns).fill(NaN);
    this.heatmapValue = new Float32Array(this.layerCount * this.heatmapColumns).fill(NaN);
    this.heatmapFirstStep = new Int32Array(this.heatmapColumns).fill(-1);
    this.heatmapLastStep = new Int32Array(this.heatmapColumns).fill(-1);
    this.heatmapFirstEvent = new Int32Array(this.heatmapColumns).fill(-1);
    this.heatmapLastEvent = new Int32Array(this.heatmapColumns).fill(-1);
  }

  #recordHeatmap(layer: number, keyError: number, valueError: number, step: number): void {
    const ordinal = this.#eventOrdinal[layer]!;
    this.#eventOrdinal[layer] = ordinal + 1;
    if (this.heatmapColumns === 0) return;
    this.heatmapVersion++;
    const column = Math.min(this.heatmapColumns - 1, Math.floor((ordinal * this.heatmapColumns) / this.heatmapEvents));
    // every quantized layer quantizes at the same steps, so a column's steps are the same for all
    if (this.heatmapFirstStep[column] === -1 || step < this.heatmapFirstStep[column]!) this.heatmapFirstStep[column] = step;
    if (step > this.heatmapLastStep[column]!) this.heatmapLastStep[column] = step;
    if (this.heatmapFirstEvent[column] === -1 || ordinal < this.heatmapFirstEvent[column]!) this.heatmapFirstEvent[column] = ordinal;
    if (ordinal > this.heatmapLastEvent[column]!) this.heatmapLastEvent[column] = ordinal;
    const index = layer * this.heatmapColumns + column;
    if (!(this.heatmapKey[index]! >= keyError)) this.heatmapKey[index] = keyError;
    if (!(this.heatmapValue[index]! >= valueError)) this.heatmapValue[index] = valueError;
  }

  #pushFlushStep(step: number): void {
    if (this.#flushStepCount === this.#flushSteps.length) {
      const grown = new Int32Array(this.#flushSteps.length * 2);
      grown.set(this.#flushSteps);
      this.#flushSteps = grown;
    }
    this.#flushSteps[this.#flushStepCount++] = step;
  }
}

/** Sum of a step's per-layer bytes (for tests and summaries). */
export function sumLayerBytes(layers: readonly (LayerMemory | null)[]): number {
  let total = 0;
  for (const layer of layers) if (layer !== null) total += layer.totalBytes;
  return total;
}
