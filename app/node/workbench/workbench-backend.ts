import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { QuantizedCacheSettings } from '../../cache/cache-config.js';
import type { ModelConfig } from '../../config/model-config.js';
import { ConfigError } from '../../errors.js';
import { modelError } from '../../engine/model-diagnostic.js';
import type { GenerationResult } from '../../engine/generation-result.js';
import type { ExecutionProviderName, RunSettings } from '../../engine/types.js';
import type { RunCheck } from '../../preflight/check-run.js';
import { runPreflight, type PreflightResult } from '../../preflight/run-preflight.js';
import { ApiError } from '../../protocol/api-error.js';
import { toRunErrorPayload } from '../../protocol/run-error.js';
import type { RunHandle, StartRun } from '../../protocol/run-handle.js';
import type {
  DamagedRunSummary, FolderListing, HistoryEntry, ModelSource, ModelSummary, RunEventHandlers, RunExport, RunExportFormat, RunSummary, RunTicket, WorkbenchApi,
  WorkbenchEnvironment,
} from '../../protocol/workbench-api.js';
import { createRunRecord, newRunId, type RunRecord } from '../../record/run-record.js';
import { dataFolderNotice, runNotSavedNotice } from '../../record/data-folder-notices.js';
import { KVSCOPE_VERSION } from '../../version.js';
import { inspectModel } from '../model/inspect-model.js';
import { readModelConfigAt } from '../model/read-model-config.js';
import { RunStore } from '../run-store.js';
import { WarmGenerationWorker } from '../worker/warm-worker.js';
import { startRun as startWorkerRun, type StartRunOptions } from '../worker/worker-client.js';
import { modelArgument } from '../../protocol/model-source.js';
import { toModelSummary, unopenedModelSummary } from './model-summary.js';
import { RecentModels } from './recent-models.js';
import { exportRawRecord, exportRunRecord } from './run-export.js';
import { damagedRunSummary } from './run-damage.js';
import { defaultRunLimits, limitConcurrentRuns, type RunLimits } from './run-limit.js';
import { summarizeRun } from '../../record/run-summary.js';
import { workbenchEnvironment } from './workbench-environment.js';
import { LabBackend } from '../lab/lab-backend.js';
import type { LabWorkerOptions } from '../lab/lab-worker-client.js';
import type { WorkerLauncher } from '../worker/worker-transport.js';
import { listFolder } from './folder-listing.js';
import { RunChecker } from './run-checker.js';
import type { ProbeOutcome } from '../ort/execution-provider-probe.js';
import { resolveModelPath } from '../run-generation.js';

export interface WorkbenchBackendOptions {
  /** where runs (`runs/<id>.json`) and the recent models (`recent.json`) live */
  readonly dataDir: string;
  readonly kvscopeVersion?: string;
  /** how runs start (default: a worker thread per run, worker-client.ts) */
  readonly startRun?: StartRun;
  /** passed to the default startRun (the built worker's location in Electron, test engines) */
  readonly runOptions?: StartRunOptions;
  /** where the synthetic models are built (default: ensureSyntheticModel's cache) */
  readonly syntheticCacheDir?: string;
  readonly now?: () => Date;
  /** the lab worker's location (Electron's bundle) and test engines */
  readonly labWorkerOptions?: LabWorkerOptions;
  /** how a Lab sweep with several jobs starts each job's process (default: Node's fork; Electron: its utilityProcess) */
  readonly labJobLauncher?: WorkerLauncher;
  /** called after the recent list changed (Electron rebuilds its Open Recent menu) */
  readonly onRecentModelsChanged?: (models: readonly ModelSource[]) => void;
  /** tries an execution provider for real (default: a session in a child process, execution-provider-probe.ts) */
  readonly probeExecutionProvider?: (name: ExecutionProviderName) => Promise<ProbeOutcome>;
  /** where the folder browser starts (default: the user's home) */
  readonly homeDir?: string;
  /**
   * Keep one generation worker warm (default true with the default startRun): opening a model loads
   * it in the worker, and runs go to that worker while it is free (warm-worker.ts).
   */
  readonly warmWorker?: boolean;
  /** how many runs go at once and wait (default: from the cores and memory, run-limit.ts) */
  readonly runLimits?: RunLimits;
}

/** Builds the handlers of a run once its id is known, so that every event can carry that id. */
export type RunHandlersFactory = (runId: string) => RunEventHandlers;

/**
 * The WorkbenchApi operations on the Node side, shared by the Electron main process and the serve
 * host (the host-specific ones, a native folder picker and menu commands, stay with the hosts).
 * Every operation answers the way the API promises; disposing stops the runs still going.
 */
export interface WorkbenchBackend extends Omit<WorkbenchApi, 'host' | 'pickModelFolder' | 'onCommand' | 'startRun' | 'lab'> {
  /** the Lab view's sweeps, saved in `<dataDir>/sweeps/` (app/node/lab/lab-backend.ts) */
  readonly lab: LabBackend;
  startRun(settings: RunSettings, handlers: RunEventHandlers): Promise<RunTicket>;
  /**
   * Starts a run synchronously and returns its ticket: its events (worker messages) cannot arrive
   * before this returns, so a transport can tag each with the run id.
   */
  beginRun(settings: RunSettings, handlers: RunHandlersFactory): RunTicket;
  /**
   * Cancels every live run and resolves once each has ended and its record is saved (stopReason
   * `cancelled`): what a host does on SIGINT/SIGTERM or quit, before it disposes. No run starts after.
   */
  stopRuns(): Promise<void>;
  readonly dataDir: string;
  dispose(): Promise<void>;
}

export function createWorkbenchBackend(options: WorkbenchBackendOptions): WorkbenchBackend {
  return new NodeWorkbenchBackend(options);
}

class NodeWorkbenchBackend implements WorkbenchBackend {
  readonly dataDir: string;
  readonly lab: LabBackend;
  private readonly store: RunStore;
  private readonly recent: RecentModels;
  private readonly kvscopeVersion: string;
  private readonly start: StartRun;
  private readonly now: () => Date;
  /** each live run's handle, and its whole course: ended, saved and reported */
  private readonly live = new Map<string, { readonly handle: RunHandle; readonly settled: Promise<void> }>();
  /** summaries (or damage) by file id, valid while the file's mtime is unchanged: a list re-reads only new records */
  private readonly summaries = new Map<string, { modifiedMs: number; summary: RunSummary | DamagedRunSummary }>();
  private readonly checker: RunChecker;
  private readonly warm: WarmGenerationWorker | null;
  private environmentAnswer: Promise<WorkbenchEnvironment> | undefined;
  /** Records that could not be written (a full or read-only disk): kept for this session, so they can still be exported. */
  private readonly unsaved = new Map<string, RunRecord>();
  private disposed = false;
  private stopping = false;

  constructor(private readonly options: WorkbenchBackendOptions) {
    this.dataDir = resolve(options.dataDir);
    this.store = new RunStore(join(this.dataDir, 'runs'));
    this.recent = new RecentModels(join(this.dataDir, 'recent.json'), options.onRecentModelsChanged);
    this.kvscopeVersion = options.kvscopeVersion ?? KVSCOPE_VERSION;
    this.lab = new LabBackend({
      dataDir: this.dataDir, kvscopeVersion: this.kvscopeVersion,
      ...(options.labWorkerOptions === undefined ? {} : { workerOptions: options.labWorkerOptions }),
      ...(options.labJobLauncher === undefined ? {} : { jobLauncher: options.labJobLauncher }),
      ...(options.now === undefined ? {} : { now: options.now }),
      // a retrieval sweep's samples run as the run panel's runs do (a test's engine, else a worker of their own)
      startRun: options.startRun ?? ((settings, handlers) => startWorkerRun(settings, handlers, options.runOptions)),
    });
    this.warm = options.startRun === undefined && options.warmWorker !== false ? new WarmGenerationWorker(options.runOptions) : null;
    // One limit per host on the runs going at once (run-limit.ts); the rest wait or are refused. A run
    // goes to the warm worker while it is free, else to a worker of its own.
    this.start = limitConcurrentRuns(options.startRun ?? ((settings, handlers) =>
      this.warm?.tryStart(settings, handlers) ?? startWorkerRun(settings, handlers, options.runOptions)), options.runLimits ?? defaultRunLimits());
    this.now = options.now ?? (() => new Date());
    this.checker = new RunChecker({
      resolveModel: (model) => this.resolveRunModel(model),
      executionProviderProblem: async (name) => {
        const provider = (await this.environment()).executionProviders.find((ep) => ep.name === name);
        if (provider === undefined || provider.available) return null;
        return { message: provider.reason ?? `The ${name} execution provider is not available here.`, ...(provider.fix !== undefined ? { fix: provider.fix } : {}) };
      },
    });
  }

  /** Probed once (execution providers are tried for real), then answered from memory. */
  environment(): Promise<WorkbenchEnvironment> {
    this.environmentAnswer ??= workbenchEnvironment(this.kvscopeVersion, this.options.probeExecutionProvider);
    return this.environmentAnswer;
  }

  async checkRun(settings: RunSettings): Promise<RunCheck> {
    return this.checker.check(settings);
  }

  async listFolder(path: string | null, offset?: number): Promise<FolderListing> {
    return listFolder(path, this.recent.list(), this.options.homeDir, offset);
  }

  async openModel(given: ModelSource, onnxFile?: string): Promise<ModelSummary> {
    const source = asModelFolder(given);
    let path: string;
    try {
      path = await this.modelPath(source);
    } catch (error) {
      const fix = (error as { fix?: unknown }).fix;
      return unopenedModelSummary(source, modelError('model-folder-missing', `The ${source.kind} model could not be built: ${(error as Error).message}`,
        typeof fix === 'string' ? fix : 'Check that the cache folder (KVSCOPE_CACHE_DIR or ~/.cache/kvscope) is writable and has about 100 MB free.'));
    }
    const inspection = await inspectModel(path, onnxFile);
    // A folder source is remembered as the model folder itself, whichever file inside it was given.
    const opened: ModelSource = source.kind === 'folder' ? { kind: 'folder', path: inspection.folder?.folder ?? resolve(source.path) } : source;
    // Remembered once it is a model folder at all, even with errors: the user may be fixing it.
    // Best effort: a data folder that cannot be written is a notice on a model that opened fine.
    const notSaved = inspection.folder !== null ? this.recent.add(opened).notSaved : null;
    const summary = toModelSummary(opened, inspection);
    // The first run should not wait for the worker, onnxruntime and the session: load them now.
    if (summary.ok) void this.checker.prefetch(modelArgument(opened), summary.onnxFile ?? undefined);
    // (A synthetic model built into a test's own cache folder is not where the worker would look.)
    const warmable = opened.kind === 'folder' || this.options.syntheticCacheDir === undefined;
    if (summary.ok && warmable && this.warm !== null && !this.warm.busy) {
      const target = { model: modelArgument(opened), executionProvider: 'cpu' as const, ...(summary.onnxFile !== null ? { onnxFile: summary.onnxFile } : {}) };
      this.warm.warm(target).catch((error: unknown) => console.error(`kvscope: could not warm ${target.model}: ${(error as Error).message}`));
    }
    if (notSaved === null) return summary;
    return { ...summary, diagnostics: [...summary.diagnostics, dataFolderNotice(`This model could not be added to Open Recent: ${notSaved}`)] };
  }

  async preflight(model: ModelSource, settings: QuantizedCacheSettings, options: { sequenceLengths?: number[] } = {}): Promise<PreflightResult> {
    const path = await this.modelPath(model);
    let config: ModelConfig;
    try {
      config = await readModelConfigAt(path);
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      const fix = (error as { fix?: unknown }).fix;
      throw new ApiError({
        code: 'invalid-input',
        message: `Cannot read the model config of ${path}: ${(error as Error).message}`,
        fix: typeof fix === 'string' && fix !== '' ? fix : 'Open a model folder that has the config.json of its Hugging Face repository, or its genai_config.json.',
      });
    }
    return runPreflight(config, settings, options.sequenceLengths !== undefined ? { sequenceLengths: options.sequenceLengths } : {});
  }

  async startRun(settings: RunSettings, handlers: RunEventHandlers): Promise<RunTicket> {
    return this.beginRun(settings, () => handlers);
  }

  beginRun(settings: RunSettings, makeHandlers: RunHandlersFactory): RunTicket {
    if (this.disposed || this.stopping) throw new ApiError({ code: 'internal', message: 'The workbench is shutting down; no run can start.' });
    const runId = this.newLiveRunId();
    const handlers = makeHandlers(runId);
    const handle = this.start(settings, { onText: (delta, tokenIds) => handlers.onText(delta, tokenIds), onMetrics: (steps) => handlers.onMetrics(steps) });
    const settled = handle.done
      .then(
        (result) => {
          const saved = this.saveRun(runId, result);
          handlers.onDone(saved.result, saved.savedRunId);
        },
        (error: unknown) => handlers.onError(toRunErrorPayload(error)),
      )
      .catch((error: unknown) => console.error(`kvscope: a run listener failed: ${(error as Error).message}`))
      .finally(() => {
        this.live.delete(runId);
        handle.dispose();
      });
    this.live.set(runId, { handle, settled });
    return { runId };
  }

  async cancelRun(runId: string): Promise<void> {
    // A run that already ended has nothing to stop: cancelling it races its end and is not an error.
    this.live.get(runId)?.handle.cancel();
  }

  async stopRuns(): Promise<void> {
    this.stopping = true;
    const runs = [...this.live.values()];
    for (const run of runs) run.handle.cancel();
    await Promise.allSettled(runs.map((run) => run.settled));
  }

  async listRuns(): Promise<HistoryEntry[]> {
    const entries = this.store.list();
    const summaries: RunSummary[] = [];
    const damaged: DamagedRunSummary[] = [];
    for (const entry of entries) {
      const cached = this.summaries.get(entry.id);
      if (cached !== undefined && cached.modifiedMs === entry.modifiedMs) {
        if ('damaged' in cached.summary) damaged.push(cached.summary);
        else summaries.push(cached.summary);
        continue;
      }
      try {
        // Addressed by file name (RunStore.read): the summary's id opens and deletes this very file.
        const summary = summarizeRun(await this.store.read(entry.id));
        this.summaries.set(entry.id, { modifiedMs: entry.modifiedMs, summary });
        summaries.push(summary);
      } catch (error) {
        // One damaged file must not hide the rest of the history, nor vanish from it: listed with the reason.
        const summary = damagedRunSummary(entry, error);
        this.summaries.set(entry.id, { modifiedMs: entry.modifiedMs, summary });
        damaged.push(summary);
      }
    }
    summaries.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));
    damaged.sort((a, b) => b.modifiedAt.localeCompare(a.modifiedAt) || b.id.localeCompare(a.id));
    return [...summaries, ...damaged];
  }

  async loadRun(runId: string): Promise<RunRecord> {
    return this.unsaved.get(runId) ?? this.store.read(runId);
  }

  async deleteRun(runId: string): Promise<void> {
    this.store.delete(runId);
    this.summaries.delete(runId);
  }

  async exportRun(runId: string, format: RunExportFormat): Promise<RunExport> {
    if (format === 'raw') return exportRawRecord(runId, await this.store.readRaw(runId));
    return exportRunRecord(await this.loadRun(runId), format);
  }

  async recentModels(): Promise<ModelSource[]> {
    return this.recent.list();
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    const runs = [...this.live.values()];
    for (const run of runs) run.handle.dispose();
    await Promise.allSettled([...runs.map((run) => run.settled), this.lab.dispose()]);
    await this.warm?.dispose();
  }

  private async modelPath(source: ModelSource): Promise<string> {
    if (source.kind === 'folder') return source.path;
    // On demand, as resolveModelPath loads it for a worker: the builder is a chunk of its own in the desktop bundle, loaded with the first synthetic model.
    const { ensureSyntheticModel } = await import('../synthetic/ensure-synthetic-model.js');
    return ensureSyntheticModel(source.kind, this.options.syntheticCacheDir !== undefined ? { cacheDir: this.options.syntheticCacheDir } : {});
  }

  /** A run's `model` argument as a path: folders as given, synthetic models where the builder put them. */
  private async resolveRunModel(model: string): Promise<string> {
    if (this.options.syntheticCacheDir === undefined || (model !== 'synthetic' && model !== 'synthetic-hybrid')) return resolveModelPath(model);
    const { ensureSyntheticModel } = await import('../synthetic/ensure-synthetic-model.js');
    return ensureSyntheticModel(model, { cacheDir: this.options.syntheticCacheDir });
  }

  /** The record id doubles as the live run's id, so the ticket, `savedRunId` and `loadRun` agree. */
  private newLiveRunId(): string {
    let id = newRunId(this.now());
    while (this.live.has(id) || this.summaries.has(id)) id = newRunId(this.now());
    return id;
  }

  /**
   * The record is written atomically (run-store.ts). A save that fails still delivers the result,
   * with a notice among its diagnostics that says why; the record stays loadable and exportable
   * (by the run id) for this session.
   */
  private saveRun(runId: string, result: GenerationResult): { result: GenerationResult; savedRunId: string | null } {
    let record: RunRecord | undefined;
    try {
      record = createRunRecord(result, { id: runId, createdAt: this.now(), kvscopeVersion: this.kvscopeVersion });
      const path = this.store.save(record);
      // The history lists it next: summarize the record in hand instead of reading it back.
      this.summaries.set(runId, { modifiedMs: statSync(path).mtimeMs, summary: summarizeRun(record) });
      return { result, savedRunId: runId };
    } catch (error) {
      const reason = (error as Error).message;
      console.error(`kvscope: the run finished but could not be saved: ${reason}`);
      const notice = runNotSavedNotice(runId, reason);
      const kept = { ...result, diagnostics: [...result.diagnostics, notice] };
      if (record !== undefined) this.unsaved.set(runId, { ...record, diagnostics: kept.diagnostics });
      return { result: kept, savedRunId: null };
    }
  }
}

/**
 * A config.json given as the model is its folder, as the CLI reads it (`--config path/to/config.json`);
 * a .onnx file stays as given (inspectModel opens that graph of its folder).
 */
function asModelFolder(source: ModelSource): ModelSource {
  if (source.kind !== 'folder' || !/\.json$/i.test(source.path)) return source;
  const stats = statSync(source.path, { throwIfNoEntry: false });
  return stats?.isFile() === true ? { kind: 'folder', path: dirname(resolve(source.path)) } : source;
}
