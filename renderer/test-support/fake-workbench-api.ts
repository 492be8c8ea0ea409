import { ApiError } from '../../app/protocol/api-error.js';
import type { ClientOf } from '../../app/protocol/api-declaration.js';
import { WORKBENCH_METHODS } from '../../app/protocol/api-methods.js';
import { PreflightRefusedError } from '../../app/engine/engine-errors.js';
import type { ModelDiagnostic } from '../../app/engine/model-diagnostic.js';
import { EXECUTION_PROVIDERS, type RunSettings, type StepMetrics, type StopReason } from '../../app/engine/types.js';
import { promptIdsProblem } from '../../app/engine/prompt-token-ids.js';
import { NO_WEBGPU_ADAPTER_MESSAGE, noWebgpuAdapterReason, webgpuAdapterFixFor } from '../../app/engine/webgpu-availability.js';
import { checkRun, refusedRunCheck } from '../../app/preflight/check-run.js';
import { runPreflight, type PreflightResult } from '../../app/preflight/run-preflight.js';
import type { RunErrorPayload } from '../../app/protocol/messages.js';
import { toRunErrorPayload } from '../../app/protocol/run-error.js';
import type {
  FolderListing, ModelSource, ModelSummary, RunEventHandlers, RunExport, RunSummary, RunTicket, WorkbenchApi, WorkbenchCommand, WorkbenchEnvironment,
} from '../../app/protocol/workbench-api.js';
import { runNotSavedNotice } from '../../app/record/data-folder-notices.js';
import { createRunRecord, serializeRunRecord, type RunRecord } from '../../app/record/run-record.js';
import { runRecordToCsv } from '../../app/record/run-record-csv.js';
import { summarizeRun } from '../../app/record/run-summary.js';
import { FAKE_FOLDER_MODEL_NAMES, FAKE_MODELS_ROOT, fakeModel } from './fake-models.js';
import { FakeRunSimulation, fakePromptTokens } from './fake-run.js';

/** Timers the fake streams with; unit tests pass a manual scheduler. */
export interface FakeScheduler {
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface FakeApiOptions {
  readonly host?: 'browser' | 'electron';
  /** milliseconds between metrics batches (the worker batches every 80 ms) */
  readonly batchIntervalMs?: number;
  /** steps per batch; speed = stepsPerBatch / batchIntervalMs */
  readonly stepsPerBatch?: number;
  readonly scheduler?: FakeScheduler;
  /** the clock run ids and record times come from (fixed by default: deterministic ids) */
  readonly now?: () => Date;
  /** saved runs to start with */
  readonly runs?: readonly RunRecord[];
  /** what pickModelFolder answers (Electron host) */
  readonly pickedFolder?: string | null;
  /** execution providers reported unavailable, with their reason (default: CUDA, DirectML and CoreML) */
  readonly unavailableProviders?: Readonly<Partial<Record<string, string>>>;
  /**
   * Whether this fake machine has a WebGPU adapter (default false: the build machines have no GPU,
   * so WebGPU is reported as the real host's probe reports it there, with its reason and fix)
   */
  readonly webgpuAdapter?: boolean;
  /**
   * The data folder cannot be written (a full or read-only disk): runs finish but are not saved, and
   * are kept for the session by their live run id with a `run-not-saved` notice, as the real host does
   */
  readonly unwritableDataFolder?: boolean;
}

/** The fake API plus what tests drive directly. */
export interface FakeWorkbenchApi extends WorkbenchApi {
  /** emits a menu command, as the Electron host does */
  emitCommand(command: WorkbenchCommand): void;
  /** runs in progress */
  readonly activeRuns: number;
  readonly savedRecords: readonly RunRecord[];
}

const FAKE_KVSCOPE_VERSION = '0.1.0-fake';
const FAKE_ORT_VERSION = '1.30.0';
const FAKE_DATA_DIR = '/home/researcher/.config/kvscope';
const DEFAULT_UNAVAILABLE: Readonly<Record<string, string>> = {
  cuda: 'The CUDA execution provider is not bundled with this onnxruntime-node build. Run `ONNXRUNTIME_NODE_INSTALL=cuda12 node node_modules/onnxruntime-node/script/install.js` on a Linux x64 machine with CUDA 12.',
  dml: 'DirectML is available on Windows only.',
  coreml: 'CoreML is available on macOS only.',
};

/**
 * A deterministic WorkbenchApi for unit and e2e tests without an engine (test builds only: it is
 * compiled into the renderer only in `vite build --mode fake`). Models come from fake-models.ts,
 * runs from FakeRunSimulation; preflight refusals, EP refusals, cancellation, a crashing worker
 * (a prompt containing `#crash`) and the run store behave as the real backend does.
 */
export function createFakeWorkbenchApi(options: FakeApiOptions = {}): FakeWorkbenchApi {
  const scheduler: FakeScheduler = options.scheduler ?? { setTimeout: (cb, ms) => globalThis.setTimeout(cb, ms), clearTimeout: (h) => globalThis.clearTimeout(h as ReturnType<typeof setTimeout>) };
  const batchIntervalMs = options.batchIntervalMs ?? 40;
  const stepsPerBatch = options.stepsPerBatch ?? 4;
  let clockMs = Date.UTC(2026, 0, 1, 12, 0, 0);
  const now = options.now ?? (() => new Date((clockMs += 1000)));
  const unavailable = unavailableProviders(options);
  const records: RunRecord[] = [...(options.runs ?? [])];
  /** runs that could not be saved (unwritableDataFolder), by live run id, for this session */
  const unsaved = new Map<string, RunRecord>();
  const recent: ModelSource[] = [];
  const listeners = new Set<(command: WorkbenchCommand) => void>();
  const live = new Map<string, { cancel(): void }>();
  let runCounter = 0;

  const environment: WorkbenchEnvironment = {
    kvscopeVersion: FAKE_KVSCOPE_VERSION,
    ortVersion: FAKE_ORT_VERSION,
    platform: 'linux-x64 (fake engine)',
    executionProviders: EXECUTION_PROVIDERS.map((name) => {
      const why = unavailable[name];
      return why === undefined ? { name, available: true } : { name, available: false, reason: why.reason, ...(why.fix !== undefined ? { fix: why.fix } : {}) };
    }),
    defaultModel: { kind: 'synthetic' },
  };

  const api: FakeWorkbenchApi = {
    // A method declared after this fake was written answers `unsupported` until the fake simulates it.
    ...unsimulated(),
    host: options.host ?? 'browser',
    async environment() {
      return environment;
    },
    async openModel(source, onnxFile) {
      await tick(scheduler);
      return summarize(source, onnxFile, recent);
    },
    async pickModelFolder() {
      return options.host === 'electron' ? (options.pickedFolder ?? null) : null;
    },
    async preflight(model, settings, preflightOptions): Promise<PreflightResult> {
      const found = fakeModel(model);
      if (found === null) throw Object.assign(new Error(`the model path ${describe(model)} does not exist.`), { code: 'invalid-input', fix: 'Open a model folder that has config.json.' });
      return runPreflight(found.config, settings, preflightOptions?.sequenceLengths !== undefined ? { sequenceLengths: preflightOptions.sequenceLengths } : {});
    },
    async checkRun(settings) {
      const model = fakeModel(sourceOf(settings.model));
      if (model === null) return refusedRunCheck(settings.maxNewTokens, { message: `the model path ${settings.model} does not exist.`, fix: 'Open a model folder that has config.json.' });
      // the prompt as the host encodes it (app/node/model/run-prompt.ts): ids checked against the vocabulary, or text through the tokenizer
      if (settings.promptTokenIds !== undefined) {
        const problem = promptIdsProblem(settings.promptTokenIds, model.config.geometry.vocabSize);
        if (problem !== null) return refusedRunCheck(settings.maxNewTokens, problem);
      } else if (!model.hasTokenizer) {
        return refusedRunCheck(settings.maxNewTokens, { message: `${model.folder} has no tokenizer.json, so the prompt cannot be encoded.`, fix: 'Give the prompt as token ids.' });
      }
      const prompt = settings.promptTokenIds?.length ?? fakePromptTokens(settings.prompt, model.config.geometry.vocabSize ?? 512).length;
      const check = checkRun(model.config, settings, Math.max(prompt, settings.padPromptTo ?? 0));
      // the real host refuses with the probe's reason and fix (workbench-backend.ts)
      const why = unavailable[settings.executionProvider];
      return why === undefined || !check.ok ? check : { ...check, ok: false, refusal: { message: why.reason, fix: why.fix ?? why.reason }, fixes: [] };
    },
    async listFolder(path, offset) {
      return fakeFolder(path, recent, offset);
    },
    async startRun(settings, handlers): Promise<RunTicket> {
      const runId = `fake-live-${++runCounter}`;
      const cancel = beginRun(runId, settings, handlers);
      live.set(runId, { cancel });
      return { runId };
    },
    async cancelRun(runId) {
      live.get(runId)?.cancel();
    },
    async listRuns(): Promise<RunSummary[]> {
      return records.map(summarizeRun);
    },
    async loadRun(runId) {
      const record = records.find((r) => r.id === runId) ?? unsaved.get(runId);
      if (record === undefined) throw Object.assign(new Error(`There is no saved run ${runId}.`), { code: 'not-found', fix: 'Refresh the history; the run may have been deleted.' });
      return record;
    },
    async deleteRun(runId) {
      const index = records.findIndex((r) => r.id === runId);
      if (index >= 0) records.splice(index, 1);
    },
    async exportRun(runId, format): Promise<RunExport> {
      const record = await api.loadRun(runId);
      return format === 'csv'
        ? { fileName: `kvscope-run-${record.id}.csv`, mimeType: 'text/csv;charset=utf-8', content: runRecordToCsv(record), saved: null }
        : { fileName: `kvscope-run-${record.id}.json`, mimeType: 'application/json', content: serializeRunRecord(record), saved: null };
    },
    async recentModels() {
      return [...recent];
    },
    onCommand(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emitCommand(command) {
      for (const listener of listeners) listener(command);
    },
    get activeRuns() {
      return live.size;
    },
    get savedRecords() {
      return records;
    },
  };

  function beginRun(runId: string, settings: RunSettings, handlers: RunEventHandlers): () => void {
    let cancelled = false;
    let timer: unknown;
    const fail = (error: RunErrorPayload): void => {
      live.delete(runId);
      handlers.onError(error);
    };
    const model = fakeModel(sourceOf(settings.model));
    const start = (): void => {
      if (model === null) {
        fail({ code: 'invalid-input', message: `the model path ${settings.model} does not exist.`, fix: 'Give the folder of a Hugging Face ONNX model (with config.json and onnx/model.onnx), or synthetic.' });
        return;
      }
      const reason = unavailable[settings.executionProvider]?.reason;
      if (reason !== undefined) {
        fail({ code: 'refused', message: `The ${settings.executionProvider} execution provider is not available here.`, fix: reason,
          diagnostics: [{ code: 'execution-provider-unavailable', severity: 'error', origin: 'kvscope', message: `The ${settings.executionProvider} execution provider is not available here.`, layers: [], fix: reason }] });
        return;
      }
      const onnxFile = settings.onnxFile ?? model.onnxFiles[0]!;
      const simulation = new FakeRunSimulation(model.config, model.kvDtypes[onnxFile] ?? 'float32', settings, settings.sampling.seed + runCounter * 0, !model.hasTokenizer);
      let diagnostics: ModelDiagnostic[] = [];
      if (settings.cacheMode === 'quantized') {
        const preflight = runPreflight(model.config, settings.quantization, { sequenceLengths: [simulation.promptTokenIds.length] });
        if (!preflight.ok) {
          fail(toRunErrorPayload(new PreflightRefusedError(preflight.diagnostics)));
          return;
        }
        diagnostics = preflight.diagnostics.filter((d) => d.severity !== 'error') as unknown as ModelDiagnostic[];
      }
      const crashAt = settings.prompt.includes('#crash') ? Math.min(settings.maxNewTokens - 1, 12) : -1;
      const finish = (stopReason: StopReason): void => {
        live.delete(runId);
        const result = simulation.result(stopReason, { folder: model.folder, onnxFile }, diagnostics);
        const createdAt = now();
        const id = `${createdAt.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)}-${(runCounter * 0x1f3a5b).toString(16).slice(-6).padStart(6, '0')}`;
        if (options.unwritableDataFolder === true) {
          // the real host's words for a failed save (workbench-backend.ts saveRun)
          const kept = { ...result, diagnostics: [...result.diagnostics, runNotSavedNotice(runId, `Cannot write ${FAKE_DATA_DIR}/runs/${runId}.json: the disk is full.`)] };
          unsaved.set(runId, createRunRecord(kept, { id: runId, createdAt, kvscopeVersion: FAKE_KVSCOPE_VERSION }));
          handlers.onDone(kept, null);
          return;
        }
        const record = createRunRecord(result, { id, createdAt, kvscopeVersion: FAKE_KVSCOPE_VERSION });
        records.unshift(record);
        handlers.onDone(result, record.id);
      };
      const batch = (): void => {
        if (cancelled) {
          finish('cancelled');
          return;
        }
        const steps: StepMetrics[] = [];
        let text = '';
        const tokenIds: number[] = [];
        for (let i = 0; i < stepsPerBatch && !simulation.done; i++) {
          if (simulation.steps.length === crashAt) {
            if (steps.length > 0) handlers.onMetrics(steps);
            fail({ code: 'worker-crashed', message: 'The generation worker stopped unexpectedly (exit code 134: out of memory).', fix: 'Run again with fewer new tokens or a smaller model; the workbench itself keeps working.' });
            return;
          }
          const { metrics, delta } = simulation.next();
          steps.push(metrics);
          text += delta;
          tokenIds.push(metrics.tokenId);
        }
        handlers.onText(text, tokenIds);
        handlers.onMetrics(steps);
        if (simulation.done) {
          finish('max-new-tokens');
          return;
        }
        timer = scheduler.setTimeout(batch, batchIntervalMs);
      };
      timer = scheduler.setTimeout(batch, batchIntervalMs);
    };
    timer = scheduler.setTimeout(start, 0);
    return () => {
      cancelled = true;
      // the next batch boundary ends the run as `cancelled`, as the worker does between steps
      void timer;
    };
  }

  return api;
}

/** Why each provider cannot run on this fake machine; WebGPU as the probe finds it without an adapter. */
function unavailableProviders(options: FakeApiOptions): Readonly<Partial<Record<string, { reason: string; fix?: string }>>> {
  const given = options.unavailableProviders ?? DEFAULT_UNAVAILABLE;
  const result: Partial<Record<string, { reason: string; fix?: string }>> = {};
  for (const [name, reason] of Object.entries(given)) if (reason !== undefined) result[name] = { reason };
  if (options.webgpuAdapter !== true && result['webgpu'] === undefined) {
    result['webgpu'] = { reason: noWebgpuAdapterReason(FAKE_ORT_VERSION, NO_WEBGPU_ADAPTER_MESSAGE), fix: webgpuAdapterFixFor('linux', true) };
  }
  return result;
}

function summarize(source: ModelSource, onnxFile: string | undefined, recent: ModelSource[]): ModelSummary {
  const model = fakeModel(source);
  if (model === null) {
    const path = describe(source);
    return {
      source, displayName: path.split('/').filter(Boolean).at(-1) ?? path, folder: null, onnxFiles: [], onnxFile: null, config: null, kvDtype: null, chatTemplate: null, ok: false,
      diagnostics: [{ code: 'model-folder-missing', severity: 'error', origin: 'kvscope', layers: [],
        message: `the model path ${path} does not exist.`,
        fix: 'Give the folder of a Hugging Face ONNX model (with config.json and onnx/model.onnx), or synthetic.' }],
    };
  }
  const chosen = onnxFile !== undefined && model.onnxFiles.includes(onnxFile) ? onnxFile : model.onnxFiles[0]!;
  const opened: ModelSource = source.kind === 'folder' ? { kind: 'folder', path: model.folder } : source;
  const index = recent.findIndex((r) => JSON.stringify(r) === JSON.stringify(opened));
  if (index >= 0) recent.splice(index, 1);
  recent.unshift(opened);
  recent.splice(9);
  return {
    source: opened, displayName: model.displayName, folder: model.folder, onnxFiles: model.onnxFiles, onnxFile: chosen,
    config: model.config, kvDtype: model.kvDtypes[chosen] ?? 'float32', chatTemplate: model.chatTemplate,
    hasTokenizer: model.hasTokenizer, vocabSize: model.config.geometry.vocabSize,
    diagnostics: model.hasTokenizer ? [] : [{
      code: 'tokenizer-missing', severity: 'warning', origin: 'kvscope', layers: [],
      message: `${model.folder} has no tokenizer.json: prompts cannot be encoded, and generated tokens are shown as ids.`,
      fix: 'Give the prompt as token ids, or copy tokenizer.json and tokenizer_config.json from the model\'s repository.',
    }],
    ok: true,
  };
}

function sourceOf(model: string): ModelSource {
  return model === 'synthetic' || model === 'synthetic-hybrid' ? { kind: model } : { kind: 'folder', path: model };
}

/** The fake host's file system: a home folder, and /fake/models holding the fake model folders. */
function fakeFolder(path: string | null, recent: readonly ModelSource[], offset = 0): FolderListing {
  const home = '/home/researcher';
  const folder = (path ?? home).replace(/\/+$/, '') || '/';
  if (folder === FAKE_HUGE_FOLDER) return fakeHugeFolder(offset, home);
  const tree: Readonly<Record<string, readonly string[]>> = {
    '/': ['fake', 'home'], '/home': ['researcher'], '/home/researcher': [], '/fake': ['models'], [FAKE_MODELS_ROOT]: FAKE_FOLDER_MODEL_NAMES,
  };
  const places = [{ label: 'Home', path: home }, ...recent.flatMap((r) => (r.kind === 'folder' ? [{ label: r.path.split('/').at(-1) ?? r.path, path: r.path }] : [])), { label: 'File system root', path: '/' }];
  const model = fakeModel({ kind: 'folder', path: folder });
  if (model !== null) {
    return {
      path: folder, parent: FAKE_MODELS_ROOT, isModel: true, places, truncated: false, offset: 0, total: 1 + model.onnxFiles.length,
      entries: [{ name: 'config.json', path: `${folder}/config.json`, kind: 'config' }, ...model.onnxFiles.map((file) => ({ name: file, path: `${folder}/${file}`, kind: 'onnx' as const }))],
    };
  }
  const children = tree[folder];
  if (children === undefined) throw Object.assign(new Error(`${folder} does not exist on the host.`), { code: 'invalid-input', fix: 'Go back up and choose a folder that exists.' });
  const parent = folder === '/' ? null : folder.slice(0, folder.lastIndexOf('/')) || '/';
  return {
    path: folder, parent, isModel: false, places, truncated: false, offset: 0, total: children.length,
    entries: children.map((name) => {
      const child = `${folder === '/' ? '' : folder}/${name}`;
      return { name, path: child, kind: folder === FAKE_MODELS_ROOT ? 'model' as const : 'folder' as const };
    }),
  };
}

function describe(source: ModelSource): string {
  return source.kind === 'folder' ? source.path : source.kind;
}

function tick(scheduler: FakeScheduler): Promise<void> {
  return new Promise((resolve) => scheduler.setTimeout(resolve, 0));
}

/** Every declared method as an `unsupported` answer, for the ones the fake does not simulate (yet). */
function unsimulated(): ClientOf<typeof WORKBENCH_METHODS> {
  const methods: Record<string, () => Promise<never>> = {};
  for (const name of Object.keys(WORKBENCH_METHODS)) {
    methods[name] = async () => {
      throw new ApiError({ code: 'unsupported', message: `The fake workbench does not simulate ${name}.` });
    };
  }
  return methods as unknown as ClientOf<typeof WORKBENCH_METHODS>;
}

/** A folder of 2,500 graphs, reachable by its path only: listed in pages of 2,000 as the host lists a huge folder (folder-listing.ts). */
export const FAKE_HUGE_FOLDER = '/fake/huge-folder';
const FAKE_HUGE_ENTRIES = 2500;
const FAKE_PAGE_ENTRIES = 2000;

function fakeHugeFolder(offset: number, home: string): FolderListing {
  const start = Math.min(offset, FAKE_HUGE_ENTRIES);
  const end = Math.min(start + FAKE_PAGE_ENTRIES, FAKE_HUGE_ENTRIES);
  const entries = Array.from({ length: end - start }, (_, i) => {
    const name = `model_${start + i + 1}.onnx`;
    return { name, path: `${FAKE_HUGE_FOLDER}/${name}`, kind: 'onnx' as const };
  });
  return {
    path: FAKE_HUGE_FOLDER, parent: '/fake', isModel: false, places: [{ label: 'Home', path: home }, { label: 'File system root', path: '/' }],
    entries, truncated: end < FAKE_HUGE_ENTRIES, offset: start, total: FAKE_HUGE_ENTRIES,
  };
}
