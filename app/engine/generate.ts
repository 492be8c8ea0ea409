import { sumLayerMemory } from '../cache/layer-memory.js';
import { slidingWindows } from '../cache/sliding-window-layer.js';
import type { ModelConfig } from '../config/model-config.js';
import { CacheKvLane } from './cache-kv-lane.js';
import type { DecoderIo } from './decoder-io.js';
import type { DecoderSession } from './decoder-session.js';
import { PassThroughKvLane, type PassThroughLaneOptions } from './dynamic-kv-lane.js';
import { GenerationError } from './engine-errors.js';
import type { GenerationObserver } from './generation-observer.js';
import type { GenerationResult, GenerationTimings } from './generation-result.js';
import { GraphKvLane } from './graph-kv-lane.js';
import { sourcePrefill, type InGraphRun } from './in-graph-run.js';
import type { KvDims } from './kv-present.js';
import type { KvLane } from './kv-lane.js';
import { LogitsReader } from './logits-row.js';
import { OutputReleasingSession } from './output-release.js';
import { ThrottledMemorySampler } from './memory-sampler.js';
import { planRunCache, type RunCachePlan } from './plan-run-cache.js';
import { ReferenceLane } from './reference-lane.js';
import { createSampler } from './sampler.js';
import { StepInputs } from './step-inputs.js';
import { TokenTextStream } from './token-stream.js';
import type { ProcessMemory, ReferenceStepMetrics, RunSettings, StepMetrics, StopReason } from './types.js';

export interface GenerateRequest {
  readonly session: DecoderSession;
  readonly io: DecoderIo;
  readonly config: ModelConfig;
  readonly settings: RunSettings;
  /** the encoded prompt, BOS included (at least one id); its first `paddingTokens` ids are left padding */
  readonly promptTokenIds: readonly number[];
  /** left pads at the start of the prompt, masked out (RunSettings.padPromptTo); default 0 */
  readonly paddingTokens?: number;
  readonly eosTokenIds: readonly number[];
  /** the tokenizer's decode with special tokens skipped */
  readonly decodeText: (ids: readonly number[]) => string;
  /** a monotonic clock in milliseconds (performance.now on the host) */
  readonly now: () => number;
  /** process memory from the host (the pure engine has no `process`); zeros when absent */
  readonly sampleMemory?: () => ProcessMemory;
  readonly observer?: GenerationObserver;
  /** planRunCache's result for these settings and this prompt, when the host already has it (else planned here) */
  readonly cachePlan?: RunCachePlan;
  /** set when `session` runs the in-graph dequantization rewrite of the graph `io` describes (quantized mode only) */
  readonly inGraph?: InGraphRun;
  /** frees an ArrayBuffer nothing reads any more, now (Node: app/node/free-array-buffer.ts); optional */
  readonly releaseBuffer?: (buffer: ArrayBufferLike) => void;
}

/** What the engine measures; the host adds the model identity, EP, versions and load time. */
export type GenerationOutcome = Omit<GenerationResult, 'settings' | 'model' | 'executionProvider' | 'ortVersion' | 'diagnostics' | 'timings'> & {
  readonly timings: Omit<GenerationTimings, 'loadMs'>;
};

/**
 * Prefill, then one token per step until an EOS id or maxNewTokens (transformers' greedy/sample
 * loop with a batch of one). Every step: assemble feeds (token inputs + the lane's past), run the
 * session, read the last logits row, absorb present into the cache, pick the token, then metrics.
 * Cancellation is polled before each step, so it takes effect within one step.
 */
export async function generate(request: GenerateRequest): Promise<GenerationOutcome> {
  const { io, config, settings, observer = {} } = request;
  const session = new OutputReleasingSession(request.session);
  checkRequest(request);
  const promptLength = request.promptTokenIds.length;
  const cachePlan = request.cachePlan ?? planRunCache(config, settings, promptLength);
  const dims = kvDims(io, config);
  const numLayers = config.geometry.numLayers;
  const windows = slidingWindows(config.layers.actualKinds, config.geometry);
  const laneOptions: PassThroughLaneOptions = { io, numLayers, dims, slidingWindows: windows };
  const lane: KvLane = cachePlan.plan === null
    ? new PassThroughKvLane(laneOptions)
    : request.inGraph !== undefined
      ? new GraphKvLane({
        io, kv: request.inGraph.kv, numLayers, dims, plan: cachePlan.plan, settings: settings.quantization, quantizer: cachePlan.quantizer!,
        slidingWindows: windows,
        ...(request.releaseBuffer === undefined ? {} : { releaseBuffer: request.releaseBuffer }),
      })
      : new CacheKvLane({
        io, numLayers, dims, plan: cachePlan.plan, settings: settings.quantization, now: request.now, slidingWindows: windows,
        ...(cachePlan.quantizer === undefined ? {} : { quantizer: cachePlan.quantizer }),
      });
  const inputs = new StepInputs(io, session.inputs, request.paddingTokens ?? 0);
  // On the in-graph path the reference replays on the source graph (app/engine/in-graph-run.ts).
  const referenceSession = request.inGraph?.referenceSession === undefined ? session : new OutputReleasingSession(request.inGraph.referenceSession);
  const reference = settings.reference ? new ReferenceLane(referenceSession, inputs, io.logits, laneOptions) : null;
  const logitsReader = new LogitsReader(io.logits);
  const sampler = createSampler(settings.sampling);
  // Detokenizing every step costs two tokenizer decodes (and their garbage): only for a listener.
  const stream = observer.onText === undefined ? null : new TokenTextStream(request.decodeText);
  const memory = new ThrottledMemorySampler(request.sampleMemory, request.now);
  const eos = new Set(request.eosTokenIds);
  const now = request.now;
  const inUse = (buffer: ArrayBufferLike): boolean => lane.references(buffer) || reference?.references(buffer) === true;

  const generated: number[] = [];
  const steps: StepMetrics[] = [];
  let stopReason: StopReason = 'max-new-tokens';
  let prefillMs = 0;
  let decodeStart = 0;
  let decodeMs = 0;
  try {
    let stepTokens: readonly number[] = request.promptTokenIds;
    for (let step = 0; ; step++) {
      if (observer.isCancelled?.() === true) {
        stopReason = 'cancelled';
        break;
      }
      const start = now();
      if (step === 1) decodeStart = start;
      const feeds = inputs.feeds(stepTokens, lane.seqLength);
      const materializedKvBytes = lane.addFeeds(feeds);
      const fed = now();
      const outputs = await session.run(feeds);
      const ran = now();
      const logits = logitsReader.read(outputs);
      const absorbed = lane.absorb(outputs, stepTokens.length);
      const absorbedAt = now();
      const tokenId = sampler.next(logits);
      let referenceStep: ReferenceStepMetrics | undefined;
      let referenceMs = 0;
      if (reference !== null) {
        const referenceStart = now();
        const shared = step !== 0 || referenceSession === session ? outputs : await sourcePrefill(referenceSession, inputs, laneOptions, stepTokens);
        referenceStep = step === 0
          ? reference.sharePrefill(shared, stepTokens.length, logits)
          : await reference.step(stepTokens[0]!, logits, step);
        referenceMs = now() - referenceStart;
      }
      // Every output this step read is copied or adopted by now: free what no lane still reads.
      session.releaseUnreferenced(inUse);
      if (referenceSession !== session) referenceSession.releaseUnreferenced(inUse);
      generated.push(tokenId);
      const delta = stream?.push(tokenId) ?? '';
      if (delta !== '') observer.onText?.(delta, tokenId);
      const end = now();
      if (step === 0) prefillMs = end - start;
      else decodeMs = end - decodeStart;
      const metrics: StepMetrics = {
        step,
        tokenId,
        seqLength: lane.seqLength,
        timings: {
          dequantizeMs: fed - start + absorbed.dequantizeMs,
          modelMs: ran - fed,
          quantizeMs: absorbedAt - ran - absorbed.dequantizeMs,
          ...(reference === null ? {} : { referenceMs }),
          totalMs: end - start,
        },
        tokensPerSecond: step === 0 || decodeMs <= 0 ? 0 : (1000 * step) / decodeMs,
        kvBytes: lane.memory(),
        materializedKvBytes,
        flushes: absorbed.flushes,
        memory: memory.read(step === 0),
        ...(referenceStep === undefined ? {} : { reference: referenceStep }),
        ...(stream === null ? {} : { text: delta }),
      };
      steps.push(metrics);
      observer.onStep?.(metrics);
      if (eos.has(tokenId) && settings.ignoreEos !== true) {
        stopReason = 'eos';
        break;
      }
      if (generated.length >= settings.maxNewTokens) break;
      stepTokens = [tokenId];
    }
    const tail = stream?.flush() ?? '';
    if (tail !== '' && generated.length > 0) observer.onText?.(tail, generated[generated.length - 1]!);
    const kvBytes = lane.memory();
    const decodeTokens = Math.max(0, steps.length - 1);
    return {
      promptTokenIds: [...request.promptTokenIds],
      generatedTokenIds: generated,
      text: request.decodeText(generated),
      stopReason,
      steps,
      flushCounts: lane.flushCounts(),
      kvBytes,
      kvBytesTotal: sumLayerMemory(kvBytes),
      layerErrors: lane.lastErrors(),
      reference: reference?.summary() ?? null,
      timings: {
        prefillMs,
        decodeMs,
        decodeTokens,
        decodeTokensPerSecond: decodeMs > 0 ? (1000 * decodeTokens) / decodeMs : 0,
        totalMs: prefillMs + decodeMs,
      },
    };
  } finally {
    lane.dispose();
    reference?.dispose();
    session.releaseAll();
    if (referenceSession !== session) referenceSession.releaseAll();
  }
}

function checkRequest(request: GenerateRequest): void {
  const { settings, promptTokenIds } = request;
  if (!Number.isInteger(settings.maxNewTokens) || settings.maxNewTokens < 1) {
    throw new GenerationError(`maxNewTokens must be a positive integer, got ${settings.maxNewTokens}.`, 'Ask for at least 1 new token.');
  }
  if (promptTokenIds.length === 0) {
    throw new GenerationError('the prompt encodes to no tokens and the model defines no BOS token to start from.',
      'Type a prompt, or add bos_token_id to generation_config.json.');
  }
  if (request.inGraph !== undefined && settings.cacheMode !== 'quantized') {
    throw new GenerationError('the in-graph dequantization path runs quantized caches only.', 'Run a dynamic cache on the source graph.');
  }
  if (request.inGraph !== undefined && settings.reference && request.inGraph.referenceSession === undefined) {
    throw new GenerationError('the reference replay on the in-graph path needs the source graph\'s session, and none was given.',
      'Pass the source graph\'s session as inGraph.referenceSession, or turn the reference off.');
  }
  if (request.io.kvLayers.length === 0) {
    throw new GenerationError('the graph has no past_key_values inputs, so there is no KV cache to study.',
      'Use a "with past" export (optimum-cli export onnx --task text-generation-with-past).');
  }
}

/** Each KV layer's `[kvHeads, headDim]` for keys and values: the graph's declared dims, else config.json's. */
function kvDims(io: DecoderIo, config: ModelConfig): Map<number, { key: KvDims; value: KvDims }> {
  const { numKeyValueHeads, headDim } = config.geometry;
  const pick = (dim: number | string | undefined, fallback: number): number => (typeof dim === 'number' ? dim : fallback);
  return new Map(io.kvLayers.map((layer) => [layer.layer, {
    key: { kvHeads: pick(layer.keyShape[1], numKeyValueHeads), headDim: pick(layer.keyShape[3], headDim) },
    value: { kvHeads: pick(layer.valueShape[1], numKeyValueHeads), headDim: pick(layer.valueShape[3], headDim) },
  }]));
}
