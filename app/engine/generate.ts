import { sumLayerMemory } from '../cache/layer-memory.js';
import type { ModelConfig } from '../config/model-config.js';
import type { DecoderIo } from './decoder-io.js';
import type { DecoderSession } from './decoder-session.js';
import { GenerationError } from './engine-errors.js';
import type { GenerationObserver } from './generation-observer.js';
import type { GenerationResult, GenerationTimings } from './generation-result.js';
import type { InGraphRun } from './in-graph-run.js';
import type { KvLane } from './kv-lane.js';
import { OutputReleasingSession } from './output-release.js';
import { ThrottledMemorySampler } from './memory-sampler.js';
import { planRunCache, type RunCachePlan } from './plan-run-cache.js';
import { ReferenceLane } from './reference-lane.js';
import { PassThroughKvLane } from './dynamic-kv-lane.js';
import { createReferenceLane, createRunLane, passThroughLaneOptions } from './run-lane.js';
import { createSampler } from './sampler.js';
import { StepInputs } from './step-inputs.js';
import { StepRunner } from './step-runner.js';
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
 * loop with a batch of one). Every step (step-runner.ts): assemble feeds (token inputs + the lane's
 * past), run the session, read the last logits row, absorb present into the cache; then pick the
 * token, then metrics.
 * Cancellation is polled before each step, so it takes effect within one step.
 */
export async function generate(request: GenerateRequest): Promise<GenerationOutcome> {
  const { io, config, settings, observer = {} } = request;
  const session = new OutputReleasingSession(request.session);
  checkRequest(request);
  const promptLength = request.promptTokenIds.length;
  const cachePlan = request.cachePlan ?? planRunCache(config, settings, promptLength);
  const inGraph = request.inGraph === undefined ? undefined
    : { kv: request.inGraph.kv, ...(request.releaseBuffer === undefined ? {} : { releaseBuffer: request.releaseBuffer }) };
  const lane: KvLane = createRunLane(io, config, settings.quantization, cachePlan, request.now, inGraph);
  const inputs = new StepInputs(io, session.inputs, request.paddingTokens ?? 0);
  const runner = new StepRunner({ session, inputs, io, lane, now: request.now });
  // On the in-graph path the reference replays on the rewritten graph itself, every row kept in full
  // precision (createReferenceLane), unless the caller gives the source graph's session.
  const referenceSession = request.inGraph?.referenceSession === undefined ? session : new OutputReleasingSession(request.inGraph.referenceSession);
  const referenceLane = referenceSession === session
    ? createReferenceLane(io, config, settings.quantization, cachePlan, inGraph)
    : new PassThroughKvLane(passThroughLaneOptions(io, config));
  const reference = settings.reference ? new ReferenceLane(referenceSession, inputs, io, referenceLane, request.now) : null;
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
      const { outputs, logits, absorbed, materializedKvBytes, fedAt: fed, ranAt: ran, absorbedAt } = await runner.step(stepTokens);
      const tokenId = sampler.next(logits);
      let referenceStep: ReferenceStepMetrics | undefined;
      let referenceMs = 0;
      if (reference !== null) {
        const referenceStart = now();
        referenceStep = step !== 0
          ? await reference.step(stepTokens[0]!, logits, step)
          : referenceSession === session
            ? reference.sharePrefill(outputs, stepTokens.length, logits)
            : await reference.prefill(stepTokens, logits);
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
  if (request.io.kvLayers.length === 0) {
    throw new GenerationError('the graph has no past_key_values inputs, so there is no KV cache to study.',
      'Use a "with past" export (optimum-cli export onnx --task text-generation-with-past).');
  }
}
