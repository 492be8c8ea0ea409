import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { QuantizedCacheSettings } from '../../cache/cache-config.js';
import type { ModelConfig } from '../../config/model-config.js';
import { ConfigError } from '../../errors.js';
import { modelError } from '../../engine/model-diagnostic.js';
import type { RunSettings } from '../../engine/types.js';
import { runPreflight, type PreflightResult } from '../../preflight/run-preflight.js';
import { ApiError } from '../../protocol/api-error.js';
import { toRunErrorPayload } from '../../protocol/run-error.js';
import type { RunHandle, StartRun } from '../../protocol/run-handle.js';
import type { ModelSource, ModelSummary, RunEventHandlers, RunExport, RunSummary, RunTicket, WorkbenchApi, WorkbenchEnvironment } from '../../protocol/workbench-api.js';
import { createRunRecord, newRunId, type RunRecord } from '../../record/run-record.js';
import { KVSCOPE_VERSION } from '../../version.js';
import { inspectModel } from '../model/inspect-model.js';
import { readModelConfigAt } from '../model/read-model-config.js';
import { RunStore } from '../run-store.js';
import { ensureSyntheticModel } from '../synthetic/ensure-synthetic-model.js';
import { startRun as startWorkerRun, type StartRunOptions } from '../worker/worker-client.js';
import { toModelSummary, unopenedModelSummary } from './model-summary.js';
import { RecentModels } from './recent-models.js';
import { exportRunRecord } from './run-export.js';
import { summarizeRun } from '../../record/run-summary.js';
import { workbenchEnvironment } from './workbench-environment.js';
import { LabBackend } from '../lab/lab-backend.js';
import type { LabWorkerOptions } from '../lab/lab-worker-client.js';

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
  /** called after the recent list changed (Electron rebuilds its Open Recent menu) */
  readonly onRecentModelsChanged?: (models: readonly ModelSource[]) => void;
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
  private readonly live = new Map<string, RunHandle>();
  /** summaries by record id, valid while the file's mtime is unchanged: a list re-reads only new records */
  private readonly summaries = new Map<string, { modifiedMs: number; summary: RunSummary }>();
  private disposed = false;

  constructor(private readonly options: WorkbenchBackendOptions) {
    this.dataDir = resolve(options.dataDir);
    this.store = new RunStore(join(this.dataDir, 'runs'));
    this.recent = new RecentModels(join(this.dataDir, 'recent.json'), options.onRecentModelsChanged);
    this.kvscopeVersion = options.kvscopeVersion ?? KVSCOPE_VERSION;
    this.lab = new LabBackend({
      dataDir: this.dataDir, kvscopeVersion: this.kvscopeVersion,
      ...(options.labWorkerOptions === undefined ? {} : { workerOptions: options.labWorkerOptions }),
      ...(options.now === undefined ? {} : { now: options.now }),
    });
    this.start = options.startRun ?? ((settings, handlers) => startWorkerRun(settings, handlers, options.runOptions));
    this.now = options.now ?? (() => new Date());
  }

  async environment(): Promise<WorkbenchEnvironment> {
    return workbenchEnvironment(this.kvscopeVersion);
  }

  async openModel(source: ModelSource, onnxFile?: string): Promise<ModelSummary> {
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
    if (inspection.folder !== null) this.recent.add(opened);
    return toModelSummary(opened, inspection);
  }

  async preflight(model: ModelSource, settings: QuantizedCacheSettings, options: { sequenceLengths?: number[] } = {}): Promise<PreflightResult> {
    const path = await this.modelPath(model);
    let config: ModelConfig;
    try {
      config = readModelConfigAt(path);
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      throw new ApiError({
        code: 'invalid-input',
        message: `Cannot read the model config of ${path}: ${(error as Error).message}`,
        fix: (error as { fix?: string }).fix ?? 'Open a model folder that has the config.json of its Hugging Face repository, or its genai_config.json.',
      });
    }
    return runPreflight(config, settings, options.sequenceLengths !== undefined ? { sequenceLengths: options.sequenceLengths } : {});
  }

  async startRun(settings: RunSettings, handlers: RunEventHandlers): Promise<RunTicket> {
    return this.beginRun(settings, () => handlers);
  }

  beginRun(settings: RunSettings, makeHandlers: RunHandlersFactory): RunTicket {
    if (this.disposed) throw new ApiError({ code: 'internal', message: 'The workbench is shutting down; no run can start.' });
    const runId = this.newLiveRunId();
    const handlers = makeHandlers(runId);
    const handle = this.start(settings, { onText: (delta, tokenIds) => handlers.onText(delta, tokenIds), onMetrics: (steps) => handlers.onMetrics(steps) });
    this.live.set(runId, handle);
    void handle.done
      .then(
        (result) => {
          const savedRunId = this.saveRun(runId, result);
          handlers.onDone(result, savedRunId);
        },
        (error: unknown) => handlers.onError(toRunErrorPayload(error)),
      )
      .catch((error: unknown) => console.error(`kvscope: a run listener failed: ${(error as Error).message}`))
      .finally(() => {
        this.live.delete(runId);
        handle.dispose();
      });
    return { runId };
  }

  async cancelRun(runId: string): Promise<void> {
    // A run that already ended has nothing to stop: cancelling it races its end and is not an error.
    this.live.get(runId)?.cancel();
  }

  async listRuns(): Promise<RunSummary[]> {
    const entries = this.store.list();
    const summaries: RunSummary[] = [];
    for (const entry of entries) {
      const cached = this.summaries.get(entry.id);
      if (cached !== undefined && cached.modifiedMs === entry.modifiedMs) {
        summaries.push(cached.summary);
        continue;
      }
      try {
        const summary = summarizeRun(this.store.load(entry.id));
        this.summaries.set(entry.id, { modifiedMs: entry.modifiedMs, summary });
        summaries.push(summary);
      } catch (error) {
        // One damaged file must not hide the rest of the history; loading it shows why it is damaged.
        console.error(`kvscope: skipped run ${entry.id} in the history: ${(error as Error).message}`);
      }
    }
    return summaries.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));
  }

  async loadRun(runId: string): Promise<RunRecord> {
    return this.store.load(runId);
  }

  async deleteRun(runId: string): Promise<void> {
    this.store.delete(runId);
    this.summaries.delete(runId);
  }

  async exportRun(runId: string, format: 'json' | 'csv'): Promise<RunExport> {
    return exportRunRecord(this.store.load(runId), format);
  }

  async recentModels(): Promise<ModelSource[]> {
    return this.recent.list();
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    const handles = [...this.live.values()];
    for (const handle of handles) handle.dispose();
    await Promise.allSettled([...handles.map((handle) => handle.done), this.lab.dispose()]);
  }

  private async modelPath(source: ModelSource): Promise<string> {
    if (source.kind === 'folder') return source.path;
    return ensureSyntheticModel(source.kind, this.options.syntheticCacheDir !== undefined ? { cacheDir: this.options.syntheticCacheDir } : {});
  }

  /** The record id doubles as the live run's id, so the ticket, `savedRunId` and `loadRun` agree. */
  private newLiveRunId(): string {
    let id = newRunId(this.now());
    while (this.live.has(id) || this.summaries.has(id)) id = newRunId(this.now());
    return id;
  }

  /** The record is written atomically (run-store.ts); a failed save still delivers the result. */
  private saveRun(runId: string, result: Parameters<typeof createRunRecord>[0]): string | null {
    try {
      const record = createRunRecord(result, { id: runId, createdAt: this.now(), kvscopeVersion: this.kvscopeVersion });
      const path = this.store.save(record);
      // The history lists it next: summarize the record in hand instead of reading it back.
      this.summaries.set(runId, { modifiedMs: statSync(path).mtimeMs, summary: summarizeRun(record) });
      return runId;
    } catch (error) {
      console.error(`kvscope: the run finished but could not be saved: ${(error as Error).message}`);
      return null;
    }
  }
}

