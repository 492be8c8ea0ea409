import type { SessionCompute } from './session-compute.js';
import type { LayerMemory } from '../cache/layer-memory.js';
import type { ErrorStats } from '../quant/error-stats.js';
import type { KvDtype } from '../tensor/kv-tensor.js';
import type { Diagnostic } from '../preflight/diagnostic.js';
import type { ModelDiagnostic } from './model-diagnostic.js';
import type { DequantizePath, ExecutionProviderName, ReferenceSummary, RunSettings, StepMetrics, StopReason } from './types.js';

/**
 * What a finished (or cancelled) run returns: the worker sends it as the run's last message, and the
 * run record stores it. Pure data (structured-clone safe), like everything in ./types.ts.
 */
export interface GenerationResult {
  /** the settings as given (model still `synthetic` for a synthetic run; see `model.folder`) */
  readonly settings: RunSettings;
  readonly model: ModelIdentity;
  /** the execution provider the session actually ran on */
  readonly executionProvider: ExecutionProviderName;
  /** onnxruntime's version (`ort.env.versions`), e.g. `1.30.0` */
  readonly ortVersion: string;
  /** the prompt as fed, BOS included when the tokenizer adds it */
  readonly promptTokenIds: readonly number[];
  /** every token sampled, the final EOS included when the run stopped on one */
  readonly generatedTokenIds: readonly number[];
  /** the decoded text of `generatedTokenIds` (special tokens skipped) */
  readonly text: string;
  readonly stopReason: StopReason;
  /** one entry per step, step 0 = prefill */
  readonly steps: readonly StepMetrics[];
  /** per decoder layer: flushes so far (the prefill's quantize is not a flush); null where the layer keeps no KV cache */
  readonly flushCounts: readonly (number | null)[];
  /** per decoder layer at the end: stored bytes by component and the fp16/fp32 baselines; null where no KV cache */
  readonly kvBytes: readonly (LayerMemory | null)[];
  /** field-wise sum of `kvBytes` */
  readonly kvBytesTotal: LayerMemory;
  /** per decoder layer: the K and V error of its last quantize event; null for unquantized layers */
  readonly layerErrors: readonly (LayerQuantizeError | null)[];
  /** present when `settings.reference` was on */
  readonly reference: ReferenceSummary | null;
  readonly timings: GenerationTimings;
  /** the model checks' warnings and notes (errors stop the run before it starts) */
  readonly diagnostics: readonly ModelDiagnostic[];
  /** quantized runs: the preflight's warnings and notes for these settings and this prompt length */
  readonly preflightDiagnostics?: readonly Diagnostic[];
  /** quantized runs: where the cache was dequantized (settings.dequantize, or the default's choice); absent for dynamic runs */
  readonly dequantize?: DequantizePath;
  /** how the session computed: the logits rows, ORT's weight prepacking (session-compute.ts); absent in records from before it was recorded */
  readonly session?: SessionCompute;
}

/** Which model ran, precisely enough to tell two runs' models apart. */
export interface ModelIdentity {
  /** absolute folder path (for synthetic models, where the builder put them) */
  readonly folder: string;
  /** the graph file, relative to `folder` (e.g. `onnx/model_fp16.onnx`) */
  readonly onnxFile: string;
  /** sha256 of the .onnx file's bytes, hex (external data files are not included) */
  readonly onnxSha256: string;
  /** sha256 of config.json's bytes, hex */
  readonly configSha256: string;
  /** config's text `model_type`, when it has one */
  readonly modelType: string | null;
  readonly numLayers: number;
  /** dtype of the graph's KV inputs and outputs */
  readonly kvDtype: KvDtype;
  /** per decoder layer, what it really is (`full_attention`, `sliding_attention`, `mamba`, …), for a saved run's axes */
  readonly layerKinds?: readonly string[];
}

/** The last quantize event (prefill or flush) of one layer. */
export interface LayerQuantizeError {
  readonly layer: number;
  /** step of the event (0 = prefill) */
  readonly step: number;
  readonly kind: 'prefill' | 'flush';
  readonly key: ErrorStats;
  readonly value: ErrorStats;
}

export interface GenerationTimings {
  /** creating the session and the tokenizer, before the first step */
  readonly loadMs: number;
  /**
   * within loadMs: building the rewritten graph (`--dequantize graph`); absent when the rewrite came
   * from its cache or none ran. A time, so it is here and not in the run's notes, which say the same
   * for the same settings whether the cache was cold or warm.
   */
  readonly rewriteMs?: number;
  /**
   * whether the run's session came warm from the host's session cache (a rerun, or settings run
   * recently); false: created for this run, within loadMs. Absent in records from before it was kept.
   */
  readonly sessionReused?: boolean;
  /** step 0: the whole prompt in one run */
  readonly prefillMs: number;
  /** steps 1…n together */
  readonly decodeMs: number;
  /** tokens produced by decode steps (the prefill's token is not counted) */
  readonly decodeTokens: number;
  /** decodeTokens / decodeMs, in tokens per second (0 without decode steps) */
  readonly decodeTokensPerSecond: number;
  /** prefill + decode, without loading */
  readonly totalMs: number;
}
