import type { LayoutSummary } from '../model-layout/layout-summary.js';
import type { ModelConfig } from '../config/model-config.js';
import type { ModelDiagnostic } from '../engine/model-diagnostic.js';
import type { DequantizePath, ExecutionProviderName, RunSettings, StepMetrics } from '../engine/types.js';
import type { GenerationResult } from '../engine/generation-result.js';
import type { RunErrorPayload } from './messages.js';
import type { LabApi } from '../lab/lab-api.js';
import type { ClientOf } from './api-declaration.js';
import type { WORKBENCH_METHODS } from './api-methods.js';

/**
 * Everything the renderer may ask of the engine: one function per method declared in
 * api-methods.ts (the documentation of each is there). Two implementations: the Electron preload
 * (contextBridge, one function per capability) and the serve-mode WebSocket client, both built from
 * the declaration. The renderer depends on this interface only (STYLE.md §3). Every value crossing it
 * is plain, structured-clone and JSON safe; the host validates every request it receives.
 */
export interface WorkbenchApi extends ClientOf<typeof WORKBENCH_METHODS> {
  /** which front end this is: features such as native dialogs differ */
  readonly host: 'electron' | 'browser';
  /** Application menu commands and dropped folders (Electron); a no-op subscription in the browser. Returns an unsubscribe function. */
  onCommand(listener: (command: WorkbenchCommand) => void): () => void;
  /** the Lab view's evaluations and sweeps (app/lab/lab-api.ts); absent on a host without them */
  readonly lab?: LabApi;
}

export type ModelSource =
  | { readonly kind: 'folder'; readonly path: string }
  | { readonly kind: 'synthetic' | 'synthetic-hybrid' };

export interface WorkbenchEnvironment {
  readonly kvscopeVersion: string;
  readonly ortVersion: string;
  readonly platform: string;
  /**
   * Every provider kvscope knows, `available` only where it was tried for real in this host (a WebGPU
   * adapter found, CUDA's libraries loaded); otherwise `reason` says why not and `fix` how to enable it.
   */
  readonly executionProviders: readonly { readonly name: ExecutionProviderName; readonly available: boolean; readonly reason?: string; readonly fix?: string }[];
  /** the model `npm start` opens first */
  readonly defaultModel: ModelSource;
}

/** A folder as the model browser shows it. Paths are the host's, absolute. */
export interface FolderListing {
  readonly path: string;
  /** null at the file system's root */
  readonly parent: string | null;
  /** whether this folder itself can be opened as a model (it holds config.json or a graph) */
  readonly isModel: boolean;
  /** sub-folders first, then config.json and .onnx files; hidden entries left out */
  readonly entries: readonly FolderEntry[];
  /** where to start: home, then the folders of recent models */
  readonly places: readonly { readonly label: string; readonly path: string }[];
  /** set when entries follow this page (a huge folder): ask again with `offset + entries.length` */
  readonly truncated: boolean;
  /** where `entries` start among all the folder's listed entries, in this order */
  readonly offset: number;
  /** entries the folder holds that the browser lists (every page together) */
  readonly total: number;
}

export interface FolderEntry {
  readonly name: string;
  readonly path: string;
  /** `model`: a sub-folder that holds config.json or onnx/ (openable as is) */
  readonly kind: 'folder' | 'model' | 'config' | 'onnx';
}

export interface ModelSummary {
  readonly source: ModelSource;
  /** a name for titles and lists: folder name or `synthetic` */
  readonly displayName: string;
  /** the model folder on disk (for synthetic models, where the builder put it) */
  readonly folder: string | null;
  /** every graph file found, relative to the folder, and the one checked */
  readonly onnxFiles: readonly string[];
  readonly onnxFile: string | null;
  /** null when config.json could not be read (see diagnostics) */
  readonly config: ModelConfig | null;
  readonly kvDtype: 'float32' | 'float16' | null;
  /**
   * the layout kvscope recognized (Optimum, transformers.js variant, ONNX Runtime GenAI, merged
   * decoder, decoder pair), the config it read, the graph's precision and size; absent or null when
   * the folder could not be resolved
   */
  readonly layout?: LayoutSummary | null;
  /** where the model's chat template comes from (`tokenizer_config.json`, `chat_template.jinja`); null: none */
  readonly chatTemplate: string | null;
  /** whether the folder has a tokenizer; without one the prompt is given as token ids (absent: has one) */
  readonly hasTokenizer?: boolean;
  /** prompt ids run from 0 to this − 1: the graph's logits width, else config's vocab_size; null: unknown */
  readonly vocabSize?: number | null;
  /** folder, tokenizer and graph-vs-config findings; errors mean no run can start */
  readonly diagnostics: readonly ModelDiagnostic[];
  readonly ok: boolean;
}

export interface RunEventHandlers {
  onText(delta: string, tokenIds: readonly number[]): void;
  onMetrics(steps: readonly StepMetrics[]): void;
  onDone(result: GenerationResult, savedRunId: string | null): void;
  onError(error: RunErrorPayload): void;
}

export interface RunTicket { readonly runId: string }

export interface RunSummary {
  readonly id: string;
  readonly createdAt: string;
  readonly modelName: string;
  readonly cacheMode: RunSettings['cacheMode'];
  readonly backend: string | null;
  readonly nbits: number | null;
  readonly executionProvider: ExecutionProviderName;
  readonly tokens: number;
  readonly decodeTokensPerSecond: number;
  readonly totalKvBytes: number;
  readonly fp16BaselineBytes: number;
  /** the dynamic cache the run's cache replaces: the same tokens in the graph's KV dtype */
  readonly dtypeBaselineBytes?: number;
  readonly kvDtype?: 'float32' | 'float16';
  readonly stopReason: GenerationResult['stopReason'];
  /** quantized runs: the settings History shows as columns (null for a dynamic cache) */
  readonly groupSize?: number | null;
  readonly residualLength?: number | null;
  readonly axisKey?: number | null;
  readonly axisValue?: number | null;
  /** quantized runs: where the cache was dequantized (the path that ran); absent for dynamic runs */
  readonly dequantize?: DequantizePath;
  /** stored bits per cached value at the end: codes, scales/zeros and the residual, over K and V */
  readonly bitsPerValue?: number;
  /** the reference lane's figures (null without the lane) */
  readonly meanKl?: number | null;
  readonly top1Agreement?: number | null;
  /** the kvscope extensions the run used, by label (empty for transformers' cache) */
  readonly extensions?: readonly string[];
  /** a runtime's write-once KV format that was the cache (backend, bits, group, residual and axes are then null) */
  readonly kvFormat?: string;
}

/**
 * A file of the runs folder that is not a readable record: cut, edited, too large, a link, or from a
 * newer kvscope. History lists it with the reason (never a byte of the file) so that it can be
 * deleted or, where it is a regular file within the cap, exported as it is.
 */
export interface DamagedRunSummary {
  readonly damaged: true;
  /** the file name without `.json`: how the file is addressed (delete-run, export-run) */
  readonly id: string;
  readonly fileName: string;
  /** the entry's size (a link's own, not its target's) */
  readonly bytes: number;
  /** the file's modification time, ISO 8601 */
  readonly modifiedAt: string;
  readonly reason: string;
  readonly fix: string;
  /** whether `exportRun(id, 'raw')` can hand the file out (a regular file within the run record cap) */
  readonly exportable: boolean;
}

/** One line of History: a run, or a damaged file in the runs folder. */
export type HistoryEntry = RunSummary | DamagedRunSummary;

export const RUN_EXPORT_FORMATS = ['json', 'csv', 'raw'] as const;
export type RunExportFormat = (typeof RUN_EXPORT_FORMATS)[number];

export interface RunExport {
  readonly fileName: string;
  readonly mimeType: string;
  readonly content: string;
  readonly saved: string | null;
}

export type WorkbenchCommand =
  | { readonly type: 'open-model' }
  | { readonly type: 'open-recent'; readonly source: ModelSource }
  | { readonly type: 'model-dropped'; readonly path: string }
  | { readonly type: 'run' }
  | { readonly type: 'stop' }
  | { readonly type: 'export'; readonly format: 'json' | 'csv' };
