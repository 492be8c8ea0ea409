import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import type { LayerMemory } from '../../cache/layer-memory.js';
import type { GenerationResult } from '../../engine/generation-result.js';
import type { RunSettings, StepMetrics } from '../../engine/types.js';

/** Well-formed protocol payloads for tests; each test breaks one field of a copy. */
export const SAMPLE_SETTINGS: RunSettings = {
  model: '/models/stories260k', onnxFile: 'onnx/model.onnx', executionProvider: 'cpu', cacheMode: 'quantized',
  quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 8, residualLength: 4 }, prompt: 'Once upon a time', maxNewTokens: 3,
  sampling: { greedy: true, temperature: 1, topK: 50, topP: 1, seed: 0 }, reference: true,
};

export function sampleLayerMemory(tokens: number, quantizedTokens: number): LayerMemory {
  // stories260k: 4 KV heads, head_dim 8 for K and V → 64 values per token; float32.
  const valueCount = 64 * tokens;
  const fullPrecisionBytes = 64 * (tokens - quantizedTokens) * 4;
  const codeBytes = (64 * quantizedTokens * 4) / 8;
  const metadataBytes = quantizedTokens === 0 ? 0 : 2 * 2 * 4 * 8;
  return {
    tokens, quantizedTokens, fullPrecisionTokens: tokens - quantizedTokens, valueCount, codeBytes, metadataBytes, fullPrecisionBytes,
    totalBytes: codeBytes + metadataBytes + fullPrecisionBytes, fp16BaselineBytes: valueCount * 2, fp32BaselineBytes: valueCount * 4, workingBytes: valueCount * 8,
  };
}

export function sampleStep(step: number): StepMetrics {
  return {
    step, tokenId: 400 + step, seqLength: 5 + step,
    timings: { dequantizeMs: 0.05, modelMs: 0.4, quantizeMs: 0.1, totalMs: 0.6 },
    tokensPerSecond: step === 0 ? 0 : 1500,
    kvBytes: [sampleLayerMemory(5 + step, 4), null],
    materializedKvBytes: 64 * 4 * (4 + step),
    flushes: step === 0
      ? [{ layer: 0, kind: 'prefill', tokens: 4, key: { relFroErr: 0.05, maxAbsErr: 0.3, meanAbsErr: 0.02, snrDb: 26 }, value: { relFroErr: 0, maxAbsErr: 0, meanAbsErr: 0, snrDb: Infinity } }]
      : step === 2
        ? [
          { layer: 0, kind: 'flush', tokens: 4, key: { relFroErr: 0.1, maxAbsErr: 0.5, meanAbsErr: 0.04, snrDb: 20 }, value: { relFroErr: 0.2, maxAbsErr: 0.6, meanAbsErr: 0.05, snrDb: 14 } },
          { layer: 1, kind: 'flush', tokens: 4, key: { relFroErr: 0.3, maxAbsErr: 0.5, meanAbsErr: 0.04, snrDb: 10 }, value: { relFroErr: 0.4, maxAbsErr: 0.6, meanAbsErr: 0.05, snrDb: 8 } },
        ]
        : [],
    memory: { rssBytes: 80_000_000, externalBytes: 1_000_000, arrayBuffersBytes: 500_000 },
    reference: { klDivergence: step * 0.001, top1Agrees: step !== 1, referenceTokenId: step === 1 ? 7 : 400 + step },
  };
}

export function sampleResult(): GenerationResult {
  const steps = [0, 1, 2].map(sampleStep);
  const last = sampleLayerMemory(7, 4);
  return {
    settings: SAMPLE_SETTINGS,
    model: {
      folder: '/models/stories260k', onnxFile: 'onnx/model.onnx', onnxSha256: 'ab'.repeat(32), configSha256: 'cd'.repeat(32),
      modelType: 'llama', numLayers: 2, kvDtype: 'float32',
    },
    executionProvider: 'cpu',
    ortVersion: '1.30.0',
    promptTokenIds: [1, 403, 407, 261],
    generatedTokenIds: steps.map((s) => s.tokenId),
    text: ' a "quoted", line\nbreak',
    stopReason: 'max-new-tokens',
    steps,
    flushCounts: [1, null],
    kvBytes: [last, null],
    kvBytesTotal: last,
    layerErrors: [{ layer: 0, step: 2, kind: 'flush', key: steps[2]!.flushes[0]!.key, value: steps[2]!.flushes[0]!.value }, null],
    reference: { steps: 3, meanKl: 0.001, maxKl: 0.002, top1Agreement: 2 / 3, firstDivergenceStep: 1 },
    timings: { loadMs: 12, rewriteMs: 4.5, prefillMs: 0.6, decodeMs: 1.2, decodeTokens: 2, decodeTokensPerSecond: 1666.7, totalMs: 1.8 },
    diagnostics: [{ code: 'prompt-too-long', severity: 'warning', origin: 'kvscope', message: 'a note', layers: [] }],
  };
}
