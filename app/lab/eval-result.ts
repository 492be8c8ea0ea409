import { activeExtensions as activeCacheExtensions } from '../cache/active-extensions.js';
import type { LayerMemory } from '../cache/layer-memory.js';
import type { ModelIdentity } from '../engine/generation-result.js';
import type { SessionCompute } from '../engine/session-compute.js';
import type { DequantizePath, ExecutionProviderName } from '../engine/types.js';
import type { Diagnostic } from '../preflight/diagnostic.js';
import type { FeedMode } from './chunk-plan.js';
import type { EvalSettings, WindowSettings } from './eval-settings.js';
import type { EvalSummary } from './eval-summary.js';
import type { LayerErrorSummary } from './layer-errors.js';

/** The settings as recorded: the text by identity, never its content. */
export type RecordedEvalSettings = Omit<EvalSettings, 'text'> & { readonly text: { readonly name: string } };

/** What one evaluation measured (docs/eval-record.md); the record adds kvscope's version and the time. */
export interface EvalResult {
  readonly settings: RecordedEvalSettings;
  readonly model: ModelIdentity & {
    /** sha256 over the graph, its external data, config, tokenizer and generation config (model-content-hash.ts) */
    readonly contentSha256: string;
  };
  readonly text: {
    readonly name: string;
    /** sha256 of the text's UTF-8 bytes */
    readonly sha256: string;
    /** the text's characters (with `fileBytes`: those of the start that was read) */
    readonly characters: number;
    /** set when only the start of the text file was read (`--text FILE --windows N`): the whole file's size; `sha256` is the whole file's */
    readonly fileBytes?: number;
    /** the text's tokens encoded (BOS included when the tokenizer adds it): the whole text's, or those of `tokenizedCharacters` */
    readonly tokens: number;
    /** set when only a prefix was tokenized (`--windows N`: the characters that cover the N windows) */
    readonly tokenizedCharacters?: number;
    /** true when the text was given as token ids (`--text-ids`): sha256 and characters are the ids file's */
    readonly tokenIds?: boolean;
  };
  readonly windows: WindowSettings & {
    /** windows evaluated */
    readonly count: number;
  };
  readonly executionProvider: ExecutionProviderName;
  readonly ortVersion: string;
  readonly reference: {
    /** the content key of the stored reference */
    readonly key: string;
    /** true when every window was read from the cache, false when this evaluation computed any */
    readonly cached: boolean;
    /** windows this evaluation computed and stored (the rest were in the cache); absent in records from before it was recorded */
    readonly windowsComputed?: number;
    /** the stored reference's size on disk after the evaluation, in bytes (every window it holds, not only these) */
    readonly bytes?: number;
    /** one line per cached window that failed its sha256 check, was discarded and computed again */
    readonly notes?: readonly string[];
  };
  /** the whole text (every scored prediction of every window) */
  readonly summary: EvalSummary;
  readonly perWindow: readonly { readonly index: number; readonly start: number; readonly summary: EvalSummary }[];
  readonly memory: {
    /** stored KV bytes at the end of a window (its full context): codes + scale/zero + full-precision residual */
    readonly storedBytes: number;
    /** 8 · storedBytes / values cached */
    readonly bitsPerValue: number;
    readonly total: LayerMemory;
    readonly perLayer: readonly (LayerMemory | null)[];
  };
  /** per decoder layer: flushes in one window (the prefill's quantize is not one); null without a KV cache */
  readonly flushCounts: readonly (number | null)[];
  readonly layerErrors: readonly LayerErrorSummary[];
  /** kvscope extensions in effect (named, never silent); empty for transformers' behaviour */
  readonly extensions: readonly string[];
  readonly preflightDiagnostics: readonly Diagnostic[];
  /** how the windows were fed (the setting resolved for this graph) */
  readonly feed: FeedMode;
  /** quantized caches: where the cache was dequantized (`graph` or `host`: what ran, the setting resolved); absent for dynamic */
  readonly dequantize?: DequantizePath;
  /** why the default ran `host` where `graph` was the default's first choice (the settings or the layout the rewrite does not express) */
  readonly dequantizeReason?: string;
  /** how the session computed: the logits rows, ORT's weight prepacking (app/engine/session-compute.ts); absent in records from before it was recorded */
  readonly session?: SessionCompute;
  readonly timings: {
    /** resolving the model, opening the session, tokenizing */
    readonly loadMs: number;
    /** computing or reading the reference */
    readonly referenceMs: number;
    readonly evalMs: number;
    /** session runs of the evaluation (the reference's not counted) */
    readonly runs: number;
    /** tokens fed through the cache under test */
    readonly tokensFed: number;
    readonly tokensPerSecond: number;
  };
  /** per scored prediction, windows in order (only when asked for) */
  readonly perToken?: {
    readonly nll: readonly number[];
    readonly nllReference: readonly number[];
    readonly kld: readonly number[];
    readonly deltaP: readonly number[];
    readonly top1: readonly number[];
  };
}

/** The names of the kvscope extensions `settings` switches on (the record and the CLI list them). */
export function activeExtensions(settings: Pick<EvalSettings, 'cacheMode' | 'quantization' | 'targets'>, numLayers?: number): string[] {
  const extensions: string[] = [];
  if (settings.cacheMode === 'quantized' && settings.quantization.layerPolicy !== 'all') extensions.push(`layer policy ${settings.quantization.layerPolicy}`);
  if (settings.cacheMode === 'quantized') {
    for (const extension of activeCacheExtensions(settings.quantization, numLayers)) extensions.push(`${extension.label}: ${extension.detail}`);
  }
  const targets = settings.targets;
  if (settings.cacheMode === 'quantized' && targets !== undefined && (targets.layers !== null || targets.parts !== 'both')) {
    const layers = targets.layers === null ? 'every layer' : `layers ${targets.layers.join(', ')}`;
    const parts = targets.parts === 'both' ? 'keys and values' : targets.parts === 'key' ? 'keys only' : 'values only';
    extensions.push(`lab targets: ${layers}, ${parts} quantized (the rest at full precision)`);
  }
  return extensions;
}
