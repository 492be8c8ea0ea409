import type { GenerationObserver } from '../../app/engine/generation-observer.js';
import type { GenerationResult } from '../../app/engine/generation-result.js';
import type { RunSettings, StepMetrics, StopReason } from '../../app/engine/types.js';
import type { LayerMemory } from '../../app/cache/layer-memory.js';
import { ConfigError, KvscopeError } from '../../app/errors.js';

/**
 * A stand-in for app/node/run-generation.ts, loaded into the real worker thread by tests
 * (`startRun(..., { engineModule })`). The prompt picks the behaviour:
 * - `steps`: one token per step until maxNewTokens or a cancel, yielding to the event loop between
 *   steps as session.run does; `slow`: the same with 20 ms steps;
 * - `config-error`, `refuse`, `type-error`: throw before the first step;
 * - `exit`: process.exit(3) mid-run; `uncaught`: an exception outside the run's promise;
 * - `hang`: a synchronous loop that never returns (a cancel cannot even be received);
 * - `ignore-cancel`: awaits forever without polling isCancelled; `oom`: allocates until V8 gives up.
 */
export async function runGeneration(settings: RunSettings, observer: GenerationObserver): Promise<GenerationResult> {
  switch (settings.prompt) {
    case 'config-error':
      throw new ConfigError('/models/nowhere/config.json does not exist. Check the path.');
    case 'refuse':
      throw Object.assign(new KvscopeError("`QuantizedCache` is only supported for models with only full attention layers. We found the following invalid layer types: {'sliding_attention'}"), {
        name: 'PreflightRefusedError',
        fix: 'Use --layer-policy full-attention-only.',
        diagnostics: [{ code: 'unsupported-layer-types', severity: 'error', origin: 'transformers', message: 'refused', layers: [0, 1] }],
      });
    case 'type-error':
      throw new TypeError("Cannot read properties of undefined (reading 'dims')\n    at decode (file:///x.js:1:1)");
    case 'exit':
      await nextTurn();
      process.exit(3);
    // eslint-disable-next-line no-fallthrough
    case 'uncaught':
      setTimeout(() => { throw new Error('boom outside the run'); }, 1);
      return new Promise(() => undefined);
    case 'hang':
      for (;;) { /* a native call that never returns */ }
    case 'ignore-cancel':
      return new Promise(() => undefined);
    case 'oom': {
      const hoard: number[][] = [];
      for (;;) hoard.push(new Array<number>(1e6).fill(hoard.length));
    }
    default:
      return generate(settings, observer, settings.prompt === 'slow' ? 20 : 0);
  }
}

async function generate(settings: RunSettings, observer: GenerationObserver, stepMs: number): Promise<GenerationResult> {
  const steps: StepMetrics[] = [];
  const generated: number[] = [];
  let stopReason: StopReason = 'max-new-tokens';
  for (let step = 0; step < settings.maxNewTokens; step++) {
    if (observer.isCancelled?.() === true) {
      stopReason = 'cancelled';
      break;
    }
    await (stepMs > 0 ? new Promise((resolve) => setTimeout(resolve, stepMs)) : nextTurn());
    const tokenId = 100 + step;
    generated.push(tokenId);
    observer.onText?.(`t${step} `, tokenId);
    const metrics = fakeStep(step, tokenId);
    steps.push(metrics);
    observer.onStep?.(metrics);
  }
  return fakeResult(settings, generated, steps, stopReason);
}

/** A macrotask, like onnxruntime-node's setImmediate-wrapped session.run. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function fakeLayerMemory(tokens: number): LayerMemory {
  const valueCount = 4 * tokens * 16;
  return {
    tokens, quantizedTokens: 0, fullPrecisionTokens: tokens, valueCount, codeBytes: 0, metadataBytes: 0,
    fullPrecisionBytes: valueCount * 4, totalBytes: valueCount * 4, fp16BaselineBytes: valueCount * 2, fp32BaselineBytes: valueCount * 4, workingBytes: valueCount * 4,
  };
}

export function fakeStep(step: number, tokenId: number): StepMetrics {
  return {
    step, tokenId, seqLength: step + 2,
    timings: { dequantizeMs: 0.1, modelMs: 1, quantizeMs: 0.2, totalMs: 1.3 },
    tokensPerSecond: step === 0 ? 0 : 700,
    kvBytes: [fakeLayerMemory(step + 2), null],
    materializedKvBytes: 128 * (step + 1),
    flushes: step === 0 ? [{ layer: 0, kind: 'prefill', tokens: 2, key: { relFroErr: 0.01, maxAbsErr: 0.1, meanAbsErr: 0.01, snrDb: 40 }, value: { relFroErr: 0.02, maxAbsErr: 0.2, meanAbsErr: 0.02, snrDb: Infinity } }] : [],
    memory: { rssBytes: 50_000_000, externalBytes: 1_000, arrayBuffersBytes: 2_000 },
  };
}

export function fakeResult(settings: RunSettings, generated: readonly number[], steps: readonly StepMetrics[], stopReason: StopReason): GenerationResult {
  const total = fakeLayerMemory(generated.length + 1);
  return {
    settings,
    model: { folder: '/models/fake', onnxFile: 'onnx/model.onnx', onnxSha256: 'a'.repeat(64), configSha256: 'b'.repeat(64), modelType: 'llama', numLayers: 2, kvDtype: 'float32' },
    executionProvider: settings.executionProvider,
    ortVersion: '1.30.0',
    promptTokenIds: [1],
    generatedTokenIds: generated,
    text: generated.map((_, i) => `t${i} `).join(''),
    stopReason,
    steps,
    flushCounts: [0, null],
    kvBytes: [total, null],
    kvBytesTotal: total,
    layerErrors: [null, null],
    reference: null,
    timings: { loadMs: 1, prefillMs: 1, decodeMs: 2, decodeTokens: Math.max(0, generated.length - 1), decodeTokensPerSecond: 500, totalMs: 3 },
    diagnostics: [],
  };
}

/** Counts warm-ups per model in this worker thread, so a test can tell a warm worker from a fresh one. */
const warmed = new Map<string, number>();

/** The engine's warmModel: `warm-fails` fails as a missing folder would; others report how often they were warmed. */
export async function warmModel(target: { model: string }): Promise<number> {
  await nextTurn();
  if (target.model === 'warm-fails') throw new ConfigError(`/models/${target.model}/config.json does not exist. Check the path.`);
  const count = (warmed.get(target.model) ?? 0) + 1;
  warmed.set(target.model, count);
  // a fresh thread answers 1: the "load time" is the warm-up count, which a test reads back
  return count;
}
