import { inGraphSettingsReason } from '../../app/engine/in-graph-run.js';
import { shouldFlush } from '../../app/cache/flush-schedule.js';
import { addLayerMemory, EMPTY_LAYER_MEMORY, layerMemory, type LayerMemory, type StoreBytes } from '../../app/cache/layer-memory.js';
import { planCacheLayers, planDynamicLayers, type CacheLayerPlan } from '../../app/cache/layer-plan.js';
import { slidingWindowMemory, slidingWindows } from '../../app/cache/sliding-window-layer.js';
import type { ModelConfig } from '../../app/config/model-config.js';
import type { GenerationResult, LayerQuantizeError } from '../../app/engine/generation-result.js';
import { createPrng, type Prng } from '../../app/engine/prng.js';
import type { DequantizePath, FlushMetrics, ReferenceStepMetrics, RunSettings, StepMetrics, StopReason } from '../../app/engine/types.js';
import { modelInfo, type ModelDiagnostic } from '../../app/engine/model-diagnostic.js';
import type { ErrorStats } from '../../app/quant/error-stats.js';
import type { KvDtype } from '../../app/tensor/kv-tensor.js';
import { pairGeometry, storeBytesOfShape } from '../../app/accounting/memory-what-if.js';

/** Words the fake "model" writes; one token each. */
const WORDS = [
  'the', 'little', 'girl', 'named', 'Lily', 'loved', 'to', 'play', 'with', 'her', 'toys', 'and', 'friends', 'one', 'day',
  'she', 'saw', 'a', 'big', 'red', 'ball', 'in', 'park', 'was', 'very', 'happy', 'said', 'mommy', 'can', 'I', 'have', 'it',
  'they', 'went', 'home', 'together', 'sun', 'bright', 'tree', 'bird', 'sang', 'song', 'dog', 'ran', 'fast', 'smiled',
];

/** Relative Frobenius error of one quantize event by bit width (stories260k measures 3–5 % at 4 bits). */
const BASE_ERROR: Readonly<Record<number, number>> = { 1: 0.55, 2: 0.22, 3: 0.1, 4: 0.042, 8: 0.0027 };
const BASE_KL: Readonly<Record<number, number>> = { 1: 1.1, 2: 0.28, 3: 0.09, 4: 0.035, 8: 0.0012 };

/**
 * A deterministic stand-in for the engine: the cache bookkeeping is the real one (transformers'
 * flush rule from app/cache/flush-schedule.ts, bytes from app/cache/layer-memory.ts with the
 * backends' store sizes), while errors, timings, tokens and the reference lane are seeded noise of
 * realistic size. Same settings, same stream.
 */
export class FakeRunSimulation {
  readonly plans: readonly CacheLayerPlan[];
  readonly steps: StepMetrics[] = [];
  readonly generatedTokenIds: number[] = [];
  readonly promptTokenIds: number[];
  #text = '';
  readonly #random: Prng;
  readonly #geometry;
  readonly #quantizedLayerCount: number;
  readonly #windows: readonly (number | null)[];
  #cumulative = 0;
  #storeTokens = 0;
  #residualTokens = 0;
  #residualIs4d = false;
  #stores: { tokens: number; stores: StoreBytes[] } = { tokens: -1, stores: [] };
  #eventsPerLayer: number[];
  readonly #flushCounts: number[];
  readonly #lastErrors: (LayerQuantizeError | null)[];
  #decodeMs = 0;
  #prefillMs = 0;

  constructor(readonly config: ModelConfig, readonly kvDtype: KvDtype, readonly settings: RunSettings, seed: number, readonly idsAsText = false) {
    const layers = config.layers.layers;
    this.plans = settings.cacheMode === 'dynamic' ? planDynamicLayers(layers) : planCacheLayers(layers, settings.quantization.layerPolicy);
    this.#quantizedLayerCount = this.plans.filter((plan) => plan === 'quantized').length;
    this.#windows = slidingWindows(config.layers.actualKinds, config.geometry);
    this.#geometry = pairGeometry(config, kvDtype);
    this.#random = createPrng(seed ^ 0x5eed);
    const prompt = settings.promptTokenIds !== undefined ? [...settings.promptTokenIds] : fakePromptTokens(settings.prompt, this.vocabSize);
    // left padding, as the engine does for RunSettings.padPromptTo
    this.promptTokenIds = [...new Array<number>(Math.max(0, (settings.padPromptTo ?? 0) - prompt.length)).fill(2), ...prompt];
    this.#eventsPerLayer = layers.map(() => 0);
    this.#flushCounts = layers.map(() => 0);
    this.#lastErrors = layers.map(() => null);
  }

  get vocabSize(): number {
    return this.config.geometry.vocabSize ?? 512;
  }

  get done(): boolean {
    return this.steps.length >= this.settings.maxNewTokens;
  }

  /** Runs the next step; returns its metrics and the text it added. */
  next(): { metrics: StepMetrics; delta: string } {
    const step = this.steps.length;
    const flushes = this.#advanceCache(step);
    const memory = this.#layerMemory();
    const kvBytes = this.plans.map((plan, layer) => {
      if (plan === 'quantized') return memory.quantized;
      if (plan === 'none') return null;
      const window = this.#windows[layer] ?? null;
      return window === null ? memory.dynamic : slidingWindowMemory(memory.dynamic, window);
    });
    const wordIndex = Math.floor(this.#random.next() * WORDS.length);
    const tokenId = 3 + ((wordIndex * 7 + 11) % Math.max(1, this.vocabSize - 3));
    // a folder without a tokenizer shows the ids as its text, as the host does (run-generation.ts idsAsText)
    const delta = this.idsAsText ? `${step === 0 ? '' : ' '}${tokenId}` : (step % 23 === 22 ? '.\n' : step === 0 ? ',' : '') + ' ' + WORDS[wordIndex]!;
    const timings = this.#timings(step, flushes);
    if (step === 0) this.#prefillMs = timings.totalMs;
    else this.#decodeMs += timings.totalMs;
    const totalBytes = kvBytes.reduce((sum, layer) => sum + (layer?.totalBytes ?? 0), 0);
    const metrics: StepMetrics = {
      step,
      tokenId,
      seqLength: this.#cumulative,
      timings,
      tokensPerSecond: step === 0 || this.#decodeMs === 0 ? 0 : (step / this.#decodeMs) * 1000,
      kvBytes,
      // the graph is fed every layer's whole history (a sliding layer's too), dequantized to the KV dtype
      materializedKvBytes: kvBytes.reduce((sum, layer) => sum + (layer === null ? 0 : (layer.fedTokens ?? layer.tokens) * (layer.valueCount / Math.max(1, layer.tokens)) * (this.kvDtype === 'float16' ? 2 : 4)), 0),
      flushes,
      memory: { rssBytes: 180_000_000 + 3 * totalBytes, externalBytes: 8_000_000 + totalBytes, arrayBuffersBytes: 3_600_000 + totalBytes },
      ...(this.settings.reference ? { reference: this.#reference(step, tokenId) } : {}),
      text: delta,
    };
    this.steps.push(metrics);
    this.generatedTokenIds.push(tokenId);
    this.#text += delta;
    return { metrics, delta };
  }

  /** The GenerationResult the engine would return now. */
  result(stopReason: StopReason, identity: { folder: string; onnxFile: string }, diagnostics: readonly ModelDiagnostic[]): GenerationResult {
    const last = this.steps.at(-1);
    const kvBytes = last?.kvBytes ?? this.plans.map(() => null);
    const kvBytesTotal = kvBytes.reduce<LayerMemory>((sum, layer) => (layer === null ? sum : addLayerMemory(sum, layer)), EMPTY_LAYER_MEMORY);
    const references = this.steps.map((step) => step.reference).filter((r): r is ReferenceStepMetrics => r !== undefined);
    const decodeTokens = Math.max(0, this.steps.length - 1);
    return {
      settings: this.settings,
      model: {
        folder: identity.folder, onnxFile: identity.onnxFile,
        onnxSha256: 'f'.repeat(64), configSha256: 'c'.repeat(64),
        modelType: this.config.modelType ?? null, numLayers: this.config.geometry.numLayers, kvDtype: this.kvDtype,
      },
      executionProvider: this.settings.executionProvider,
      ortVersion: '1.30.0',
      promptTokenIds: this.promptTokenIds,
      generatedTokenIds: [...this.generatedTokenIds],
      text: this.#text,
      stopReason,
      steps: [...this.steps],
      flushCounts: this.plans.map((plan, layer) => (plan === 'none' ? null : this.#flushCounts[layer]!)),
      kvBytes,
      kvBytesTotal,
      layerErrors: [...this.#lastErrors],
      reference: references.length === 0 ? null : {
        steps: references.length,
        meanKl: references.reduce((sum, r) => sum + r.klDivergence, 0) / references.length,
        maxKl: references.reduce((max, r) => Math.max(max, r.klDivergence), 0),
        top1Agreement: references.filter((r) => r.top1Agrees).length / references.length,
        firstDivergenceStep: references.findIndex((r) => !r.top1Agrees) === -1 ? null : references.findIndex((r) => !r.top1Agrees),
      },
      timings: {
        loadMs: 350, prefillMs: this.#prefillMs, decodeMs: this.#decodeMs, decodeTokens,
        decodeTokensPerSecond: this.#decodeMs === 0 ? 0 : (decodeTokens / this.#decodeMs) * 1000,
        totalMs: this.#prefillMs + this.#decodeMs,
      },
      diagnostics: [...diagnostics, ...this.#pathNote()],
      ...(this.#path() !== undefined ? { dequantize: this.#path()! } : {}),
    };
  }

  /**
   * The path the real engine would take, by its own rule (inGraphSettingsReason): an explicit choice
   * as chosen, the default in the graph unless the settings need the host. Layout questions do not
   * arise on the fake models.
   */
  #path(): DequantizePath | undefined {
    if (this.settings.cacheMode !== 'quantized') return undefined;
    return this.settings.dequantize ?? (this.#graphReason() === null ? 'graph' : 'host');
  }

  #graphReason(): string | null {
    const quantized = this.plans.flatMap((plan, layer) => (plan === 'quantized' ? [layer] : []));
    return inGraphSettingsReason(this.settings.quantization, quantized, this.plans.length);
  }

  /** the engine's note when the default went to the host (app/node/run-generation.ts openForPath) */
  #pathNote(): ModelDiagnostic[] {
    if (this.settings.cacheMode !== 'quantized' || this.settings.dequantize !== undefined) return [];
    const reason = this.#graphReason();
    const message = reason === null ? 'Dequantized inside the graph, one layer at a time.' : `Dequantized on the host (JavaScript), not in the graph: ${reason}.`;
    return [modelInfo('dequantize-path', message)];
  }

  /** transformers' QuantizedLayer bookkeeping (spec §1.3), shared by every quantized layer. */
  #advanceCache(step: number): FlushMetrics[] {
    const quantizing = this.settings.cacheMode === 'quantized' && this.#quantizedLayerCount > 0;
    let kind: 'prefill' | 'flush' | null = null;
    if (step === 0) {
      this.#cumulative = this.promptTokenIds.length;
      this.#storeTokens = this.#cumulative;
      kind = 'prefill';
    } else {
      this.#cumulative++;
      if (shouldFlush(this.#residualIs4d, this.#residualTokens, this.settings.quantization.residualLength)) {
        this.#storeTokens = this.#cumulative;
        this.#residualTokens = 0;
        this.#residualIs4d = false;
        kind = 'flush';
      } else {
        this.#residualIs4d = true;
        this.#residualTokens++;
      }
    }
    if (!quantizing || kind === null) return [];
    const events: FlushMetrics[] = [];
    this.plans.forEach((plan, layer) => {
      if (plan !== 'quantized') return;
      const ordinal = this.#eventsPerLayer[layer]!;
      this.#eventsPerLayer[layer] = ordinal + 1;
      if (kind === 'flush') this.#flushCounts[layer]!++;
      const key = this.#errorStats(layer, ordinal, 'key');
      const value = this.#errorStats(layer, ordinal, 'value');
      events.push({ layer, kind: kind!, tokens: this.#storeTokens, key, value });
      this.#lastErrors[layer] = { layer, step, kind: kind!, key, value };
    });
    return events;
  }

  #layerMemory(): { quantized: LayerMemory; dynamic: LayerMemory } {
    const quantization = this.settings.quantization;
    if (this.#stores.tokens !== this.#storeTokens && this.#quantizedLayerCount > 0 && this.settings.cacheMode === 'quantized') {
      this.#stores = { tokens: this.#storeTokens, stores: storeBytesOfShape(quantization, this.#geometry, this.#storeTokens) };
    }
    const workingBytes = this.#cumulative * this.#geometry.key.kvHeads * (this.#geometry.key.headDim + this.#geometry.value.headDim) * 4;
    return {
      quantized: layerMemory({ geometry: this.#geometry, quantizedTokens: this.#storeTokens, fullPrecisionTokens: this.#residualTokens, stores: [], storeBytes: this.#stores.stores, workingBytes }),
      dynamic: layerMemory({ geometry: this.#geometry, quantizedTokens: 0, fullPrecisionTokens: this.#cumulative, stores: [], workingBytes }),
    };
  }

  #errorStats(layer: number, ordinal: number, side: 'key' | 'value'): ErrorStats {
    const { backend, nbits, groupSize, axisKey } = this.settings.quantization;
    const keyPerChannel = (backend === 'quanto' && axisKey === -1) || (backend === 'hqq' && axisKey === 0);
    const sideFactor = side === 'key' ? (keyPerChannel ? 0.8 : 1.4) : 1;
    const layerFactor = 0.85 + 0.3 * Math.sin(layer * 1.7) ** 2;
    // quanto axis -1 drifts by re-quantizing the dequantized history at every flush (spec §1.3)
    const drift = backend === 'quanto' && axisKey === -1 && side === 'key' ? 1 + 0.012 * ordinal : 1;
    const noise = 0.93 + 0.14 * this.#random.next();
    const rel = (BASE_ERROR[nbits] ?? 0.1) * Math.pow(groupSize / 64, 0.15) * sideFactor * layerFactor * drift * noise;
    const scale = side === 'key' ? 1.5 : 0.12;
    return { relFroErr: rel, maxAbsErr: rel * 14 * scale, meanAbsErr: rel * 0.8 * scale, snrDb: -20 * Math.log10(rel) };
  }

  #timings(step: number, flushes: readonly FlushMetrics[]): StepMetrics['timings'] {
    const layers = this.config.geometry.numLayers;
    const width = this.#geometry.key.kvHeads * (this.#geometry.key.headDim + this.#geometry.value.headDim);
    const jitter = 0.95 + 0.1 * this.#random.next();
    const tokens = step === 0 ? this.#cumulative : 1;
    const modelMs = (0.8 + layers * 0.06 + this.#cumulative * layers * 0.00002) * jitter * (step === 0 ? Math.max(1, tokens / 4) : 1);
    const dequantizeMs = this.settings.cacheMode === 'quantized' ? this.#storeTokens * this.#quantizedLayerCount * width * 2.2e-7 : 0.004 * layers;
    const flushedValues = flushes.reduce((sum, event) => sum + event.tokens * width, 0);
    const quantizeMs = 0.003 * layers + flushedValues * 8e-7;
    // the reference lane replays the step through a second session.run
    const referenceMs = this.settings.reference ? modelMs * 1.05 : 0;
    return { dequantizeMs, modelMs, quantizeMs, ...(this.settings.reference ? { referenceMs } : {}), totalMs: dequantizeMs + modelMs + quantizeMs + referenceMs + 0.05 };
  }

  #reference(step: number, tokenId: number): ReferenceStepMetrics {
    if (this.settings.cacheMode === 'dynamic') return { klDivergence: 0, top1Agrees: true, referenceTokenId: tokenId };
    const base = BASE_KL[this.settings.quantization.nbits] ?? 0.05;
    const u = this.#random.next();
    const kl = base * (0.2 + 1.6 * u * u) * (1 + step / 4000) * (this.#quantizedLayerCount / Math.max(1, this.config.geometry.numLayers));
    const agrees = this.#random.next() > Math.min(0.45, kl * 2.2);
    return { klDivergence: kl, top1Agrees: agrees, referenceTokenId: agrees ? tokenId : 3 + ((tokenId + 37) % Math.max(1, this.vocabSize - 3)) };
  }
}

/** `<s>` then one token per word, like a word-level tokenizer ("Once upon a time" → 5 tokens, as stories260k). */
export function fakePromptTokens(prompt: string, vocabSize: number): number[] {
  const words = prompt.split(/\s+/).filter((word) => word.length > 0);
  return [1, ...words.map((word) => 3 + ([...word].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % Math.max(1, vocabSize - 3)))];
}
