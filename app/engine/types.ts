import type { ErrorStats } from '../quant/error-stats.js';
import type { LayerMemory } from '../cache/layer-memory.js';

/**
 * The generation engine's contract, shared by the engine (app/engine, app/node), the worker
 * protocol (app/protocol), the CLI and the UI. Pure data: everything here crosses a thread boundary
 * with structured clone.
 */

export type ExecutionProviderName = 'cpu' | 'webgpu' | 'cuda' | 'dml' | 'coreml';
export const EXECUTION_PROVIDERS: readonly ExecutionProviderName[] = ['cpu', 'webgpu', 'cuda', 'dml', 'coreml'];

/** `dynamic`: full precision (transformers' DynamicCache); `quantized`: QuantizedCache semantics. */
export type CacheMode = 'dynamic' | 'quantized';

/**
 * Where a quantized cache is dequantized for attention. `graph`: inside the ONNX graph, from the
 * stored codes, one layer at a time (only codes, scales, zeros and the residual cross into ONNX
 * Runtime; the memory is the method's); `host`: in JavaScript, every layer's history fed at once.
 * The two give the same logits bit for bit (app/onnx/rewrite/, app/engine/graph-kv-lane.ts).
 */
export type DequantizePath = 'graph' | 'host';
export const DEQUANTIZE_PATHS: readonly DequantizePath[] = ['graph', 'host'];
/** The default: the memory a researcher measures is the method's (README "Where the cache is dequantized"). */
export const DEFAULT_DEQUANTIZE_PATH: DequantizePath = 'graph';

/**
 * `text`: the prompt as typed (with the tokenizer's BOS); `chat`: one user turn through the model's
 * chat template with the generation prompt appended, as transformers' `apply_chat_template` does.
 */
export type PromptFormat = 'text' | 'chat';
export const PROMPT_FORMATS: readonly PromptFormat[] = ['text', 'chat'];

/**
 * What a run is asked to do, and its sampling: declared once as a zod schema where they cross
 * boundaries (app/protocol/run-settings-schema.ts), their types derived from it.
 */
export type { RunSettings, SamplingSettings } from '../protocol/run-settings-schema.js';

/** A quantize event of one layer during one step (prefill or a residual flush), K and V apart. */
export interface FlushMetrics {
  readonly layer: number;
  readonly kind: 'prefill' | 'flush';
  /** tokens re-quantized by this event */
  readonly tokens: number;
  readonly key: ErrorStats;
  readonly value: ErrorStats;
}

/** Milliseconds of one step, split where the time goes. */
export interface StepTimings {
  /** dequantizing stores and assembling the KV feeds */
  readonly dequantizeMs: number;
  /** session.run */
  readonly modelMs: number;
  /** reading present.* into the cache: appends, quantize and flush */
  readonly quantizeMs: number;
  /** the reference lane's teacher-forced replay (its own session.run and KL), present when the lane is on */
  readonly referenceMs?: number;
  /** the whole step; what the parts above leave is sampling, detokenizing and bookkeeping */
  readonly totalMs: number;
}

export interface ProcessMemory {
  readonly rssBytes: number;
  readonly externalBytes: number;
  readonly arrayBuffersBytes: number;
}

/** Everything measured for one generation step (step 0 = prefill). */
export interface StepMetrics {
  readonly step: number;
  readonly tokenId: number;
  /** context length after the step */
  readonly seqLength: number;
  readonly timings: StepTimings;
  /** tokens per second over the decode steps so far (0 at prefill) */
  readonly tokensPerSecond: number;
  /** per KV layer (index = decoder layer), stored bytes by component; absent layers have no KV cache */
  readonly kvBytes: readonly (LayerMemory | null)[];
  /** bytes handed to the model as KV inputs this step (dequantized history materialized), never confused with stored bytes */
  readonly materializedKvBytes: number;
  readonly flushes: readonly FlushMetrics[];
  readonly memory: ProcessMemory;
  /** present when the reference lane is on */
  readonly reference?: ReferenceStepMetrics;
  /**
   * the text this step's token completed ('' while a character is still partial), present when the
   * run streamed text; the text's tail held back at the end comes only in GenerationResult.text
   */
  readonly text?: string;
}

export interface ReferenceStepMetrics {
  /** KL(reference ‖ quantized) of the next-token distributions, in nats */
  readonly klDivergence: number;
  /** whether both lanes' argmax agree */
  readonly top1Agrees: boolean;
  /** the reference lane's argmax */
  readonly referenceTokenId: number;
}

export interface ReferenceSummary {
  readonly steps: number;
  readonly meanKl: number;
  readonly maxKl: number;
  /** share of steps whose argmax agrees, 0..1 */
  readonly top1Agreement: number;
  /** first step where greedy output would diverge, or null */
  readonly firstDivergenceStep: number | null;
}

export type StopReason = 'eos' | 'max-new-tokens' | 'cancelled';
