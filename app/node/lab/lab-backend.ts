import { createHash, randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { readSweepText, settingsForPoint } from '../../cli/sweep-point-settings.js';
import { parseEvalRecord, type EvalRecord } from '../../lab/eval-record.js';
import type { LabSweepHandlers, LabSweepRequest, LabSweepSummary, LabSweepTicket, LabSweepView } from '../../lab/lab-api.js';
import {
  collectResults, isSettled, openSweepFolder, readManifest, readPointState, writeResults, type SweepManifest,
} from '../../lab/sweep-folder.js';
import { expandSweep, type SweepPoint } from '../../lab/sweep-points.js';
import { sweepResultsCsv, type SweepResults, type SweepRow } from '../../lab/sweep-results.js';
import { SweepRun, type SweepRunOutcome } from '../../lab/sweep-run.js';
import { checkSweepSpec, type SweepSpec } from '../../lab/sweep-spec.js';
import { labSweepSpec } from '../../lab/lab-sweep-spec.js';
import { sweepBest } from '../../lab/sweep-best.js';
import { EVAL_OPTION_SPECS } from '../../cli/option-specs.js';
import { UsageError } from '../../cli/io.js';
import { RETRIEVAL_OPTION_SPECS, type RetrievalCommandRuntime } from '../../cli/retrieval-command.js';
import { isRetrievalSweep, RetrievalSweepRun } from '../../cli/sweep-retrieval.js';
import type { StartRun } from '../../protocol/run-handle.js';
import { ApiError } from '../../protocol/api-error.js';
import { stringifyJson } from '../../protocol/json-numbers.js';
import { toRunErrorPayload } from '../../protocol/run-error.js';
import type { RunExport } from '../../protocol/workbench-api.js';
import { newRunId } from '../../record/run-record.js';
import { encodeUtf8 } from '../../record/utf8.js';
import { readModelFiles } from '../model/open-model.js';
import { resolveModelPath } from '../run-generation.js';
import { retrievalRuntime } from '../retrieval/retrieval-runtime.js';
import { startRun as startWorkerRun } from '../worker/worker-client.js';
import type { LabWorkerOptions } from './lab-worker-client.js';
import { sweepJobWorker } from './sweep-job-worker.js';
import type { WorkerLauncher } from '../worker/worker-transport.js';
import { nodeEvalOptionIo, nodeSweepFolderIo } from './node-sweep-folder-io.js';

/** What to do when a sweep's files cannot be written (the CLI says the same in app/cli/sweep-command.ts). */
const STORAGE_FIX = 'Free space on the disk holding the sweep folder (or fix its permissions), then resume the sweep: complete points are kept and the unrecorded one is redone.';

export interface LabBackendOptions {
  /** the workbench's data folder: sweeps live in `sweeps/<id>/`, each a sweep folder like the CLI's */
  readonly dataDir: string;
  readonly kvscopeVersion: string;
  /** where the lab worker entry is (Electron's bundle), test engines */
  readonly workerOptions?: LabWorkerOptions;
  /** how a sweep with several jobs starts each job's process (default: Node's fork, process-launch.ts; Electron: its utilityProcess) */
  readonly jobLauncher?: WorkerLauncher;
  readonly now?: () => Date;
  readonly cores?: number;
  /** how a retrieval sweep's samples run (each as `kvscope run` runs a prompt); default: a generation worker of their own */
  readonly startRun?: StartRun;
}

/** What the Lab holds of a running sweep, text or retrieval: both runners stop and end alike. */
interface RunningSweep {
  readonly done: Promise<SweepRunOutcome>;
  stop(): void;
}

/**
 * A sweep given as its spec (eval's options, as a spec file holds them), checked as `kvscope sweep`
 * checks a file: what a Lab request's typed settings become (labSweepSpec), and how the backend's
 * own tests start sweeps a page could not describe.
 */
export interface LabSpecSweepRequest {
  readonly kind: 'spec';
  readonly name: string;
  readonly spec: SweepSpec;
  readonly jobs: number;
}

/** Builds a sweep's handlers once its id is known, so every event can carry it. */
export type LabHandlersFactory = (sweepId: string) => LabSweepHandlers;

interface SweepMeta {
  readonly name: string;
  readonly createdAt: string;
  readonly model: string;
}

/**
 * The Lab's operations on the Node side (LabApi), for the Electron main process and the serve host
 * alike: sweeps run with the same runners as `kvscope sweep` (app/lab/sweep-run.ts; a sweep whose
 * points carry a task, app/cli/sweep-retrieval.ts) into
 * `<data>/sweeps/<id>/` (sweep.json, one folder per point, results derived; lab.json holds the name
 * the view gave it), so a sweep started in the workbench can be resumed, merged or read by the CLI.
 */
export class LabBackend {
  readonly #dir: string;
  readonly #options: LabBackendOptions;
  readonly #io = nodeSweepFolderIo();
  readonly #running = new Map<string, RunningSweep>();

  constructor(options: LabBackendOptions) {
    this.#options = options;
    this.#dir = join(resolve(options.dataDir), 'sweeps');
  }

  async beginSweep(request: LabSweepRequest | LabSpecSweepRequest, handlers: LabHandlersFactory): Promise<LabSweepTicket> {
    const { sweepId, dir, manifest } = request.kind === 'resume' ? this.#reopen(request.sweepId) : await this.#create(specRequest(request));
    if (this.#running.has(sweepId)) throw new ApiError({ code: 'invalid-input', message: `The sweep ${sweepId} is already running.`, fix: 'Stop it first, or wait for it to finish.' });
    const retrieval = this.#isRetrieval(manifest.spec, manifest.points);
    const text = retrieval ? null : readSweepText(nodeEvalOptionIo(), manifest.spec, '.');
    const todo = manifest.points.filter((point) => !isSettled(readPointState(this.#io, dir, point, manifest.specSha256)));
    const on = handlers(sweepId);
    let done = manifest.points.length - todo.length;
    const running = new Set<string>();
    const progress = (): void => on.onProgress({ done, total: manifest.points.length, running: [...running] });
    const onPointStart = (point: SweepPoint): void => {
      running.add(point.name);
      progress();
    };
    const onPointDone = (point: SweepPoint, row: SweepRow): void => {
      running.delete(point.name);
      done++;
      on.onPoint(row);
      progress();
    };
    const run: RunningSweep = retrieval
      // points with a task: each runs as kvscope eval --task, through kvscope sweep's own retrieval runner, one at a time
      ? new RetrievalSweepRun({
        io: { ...this.#io, ...nodeEvalOptionIo() }, dir, manifest, points: todo, runtime: this.#retrievalRuntime(),
        randomSuffix: () => randomBytes(4).toString('hex'), onPointStart, onPointDone,
      })
      : this.#textRun(dir, manifest, text, todo, request.jobs, onPointStart, onPointDone);
    this.#running.set(sweepId, run);
    // The sweep leaves the running set before its last event, so a list the page asks for then says so.
    void run.done.then(
      (outcome) => {
        this.#running.delete(sweepId);
        // An I/O failure is never a result: the sweep ends in an error that says what to do, the point unrecorded.
        if (outcome.storageFailure !== null) {
          on.onError({ code: 'storage-failed', message: outcome.storageFailure, fix: STORAGE_FIX });
          return;
        }
        let results;
        try {
          results = writeResults(this.#io, dir, manifest);
        } catch (error) {
          on.onError({ ...toRunErrorPayload(error), fix: STORAGE_FIX });
          return;
        }
        on.onDone({ interrupted: outcome.interrupted, results });
      },
      (error: unknown) => {
        this.#running.delete(sweepId);
        on.onError(toRunErrorPayload(error));
      },
    );
    return { sweepId, points: manifest.points.length, complete: manifest.points.length - todo.length };
  }

  #textRun(
    dir: string, manifest: SweepManifest, text: ReturnType<typeof readSweepText>, todo: readonly SweepPoint[], requestedJobs: number,
    onPointStart: (point: SweepPoint) => void, onPointDone: (point: SweepPoint, row: SweepRow) => void,
  ): SweepRun {
    const cores = this.#options.cores ?? availableParallelism();
    const jobs = Math.max(1, Math.min(requestedJobs, cores, Math.max(1, todo.length)));
    return new SweepRun({
      io: this.#io, dir, manifest, points: todo, jobs,
      settingsForPoint: (point) => settingsForPoint(point, manifest.spec, text, nodeEvalOptionIo()),
      startWorker: (workers) => sweepJobWorker(this.#options.workerOptions ?? {}, workers, this.#options.jobLauncher),
      ...(jobs > 1 ? { threadsPerJob: Math.max(1, Math.floor(cores / jobs)) } : {}),
      kvscopeVersion: this.#options.kvscopeVersion, now: () => this.#now(), randomSuffix: () => randomBytes(4).toString('hex'),
      onPointStart, onPointDone,
    });
  }

  /** Whether the sweep's points carry a task (all or none: a mix, or a task beside a text, is refused in the user's words). */
  #isRetrieval(spec: SweepSpec, points: readonly SweepPoint[]): boolean {
    try {
      return isRetrievalSweep(spec, points);
    } catch (error) {
      if (error instanceof UsageError) throw new ApiError({ code: 'invalid-input', message: `The sweep cannot run: ${error.message}` });
      throw error;
    }
  }

  /** kvscope eval --task's runtime, as the CLI's: the workbench has no Ctrl-C (Stop cancels the point in flight). */
  #retrievalRuntime(): RetrievalCommandRuntime {
    const startRun: StartRun = this.#options.startRun ?? ((settings, handlers) => startWorkerRun(settings, handlers));
    return retrievalRuntime({ kvscopeVersion: this.#options.kvscopeVersion, startRun, onInterrupt: () => () => undefined, now: () => this.#now() });
  }

  async cancelSweep(sweepId: string): Promise<void> {
    this.#running.get(sweepId)?.stop();
  }

  async listSweeps(): Promise<LabSweepSummary[]> {
    const summaries: LabSweepSummary[] = [];
    for (const id of this.#io.listDirectory(this.#dir)) {
      const dir = join(this.#dir, id);
      if (!this.#io.exists(join(dir, 'sweep.json'))) continue;
      try {
        const manifest = readManifest(this.#io, dir);
        summaries.push(this.#summary(id, dir, manifest, collectResults(this.#io, dir, manifest)));
      } catch {
        // a folder that is not (or no longer) a readable sweep is left out of the list
      }
    }
    return summaries.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  }

  async loadSweep(sweepId: string): Promise<LabSweepView> {
    const dir = this.#existing(sweepId);
    const manifest = readManifest(this.#io, dir);
    const results = collectResults(this.#io, dir, manifest);
    return { summary: this.#summary(sweepId, dir, manifest, results), spec: manifest.spec, points: manifest.points, results };
  }

  async loadPoint(sweepId: string, pointName: string): Promise<EvalRecord> {
    const dir = this.#existing(sweepId);
    const manifest = readManifest(this.#io, dir);
    const point = manifest.points.find((p) => p.name === pointName);
    if (point === undefined) throw new ApiError({ code: 'invalid-input', message: `The sweep ${sweepId} has no point ${pointName}.` });
    const state = readPointState(this.#io, dir, point, manifest.specSha256);
    const evalPath = join(dir, point.name, 'eval.json');
    if (state.kind === 'ok') return parseEvalRecord(this.#io.readTextFile(evalPath), evalPath);
    const reason = state.kind === 'missing' ? 'it has not run yet'
      : state.kind === 'retrieval' ? 'it is a retrieval point (its record is retrieval.json, read with kvscope sweep\'s results)' : `it was ${state.kind}: ${state.failure.error.message}`;
    throw new ApiError({ code: 'invalid-input', message: `The point ${pointName} has no measurements: ${reason}.` });
  }

  async exportSweep(sweepId: string, format: 'json' | 'csv'): Promise<RunExport> {
    const dir = this.#existing(sweepId);
    const results = collectResults(this.#io, dir, readManifest(this.#io, dir));
    return format === 'csv'
      ? { fileName: `kvscope-sweep-${sweepId}.csv`, mimeType: 'text/csv', content: sweepResultsCsv(results), saved: null }
      : { fileName: `kvscope-sweep-${sweepId}.json`, mimeType: 'application/json', content: stringifyJson(results, 1) + '\n', saved: null };
  }

  /**
   * Stops every running sweep and waits for their workers to go: each point is cancelled at its next
   * step, then its worker ends. Not `abort`: terminating a worker thread (one job) whose onnxruntime
   * session.run is in flight aborts the whole host natively (Napi::Error); a stuck worker goes by its
   * cancel timeout (a job process is killed then, which is harmless).
   */
  async dispose(): Promise<void> {
    const runs = [...this.#running.values()];
    for (const run of runs) run.stop();
    await Promise.all(runs.map((run) => run.done.catch(() => undefined)));
  }

  async #create(request: LabSpecSweepRequest): Promise<{ sweepId: string; dir: string; manifest: SweepManifest }> {
    // The page is untrusted: its spec is checked against eval's options as a spec file is.
    const spec = checkSweepSpec(request.spec, { ...EVAL_OPTION_SPECS, ...RETRIEVAL_OPTION_SPECS }, 'the sweep');
    const layerCount = spec.preset === 'layers' ? await modelLayerCount(spec.model) : 0;
    const points = expandSweep(spec, layerCount);
    // checked before the folder is made: a spec mixing task and text points leaves nothing behind
    this.#isRetrieval(spec, points);
    const createdAt = this.#now();
    const sweepId = newRunId(createdAt);
    const dir = join(this.#dir, sweepId);
    const manifest: SweepManifest = { format: 'kvscope-sweep', version: 1, specSha256: sha256(stringifyJson(spec)), spec, points, shard: null };
    openSweepFolder(this.#io, dir, manifest);
    const meta: SweepMeta = { name: request.name.trim() || sweepId, createdAt: createdAt.toISOString(), model: modelName(spec) };
    this.#io.writeFileAtomic(join(dir, 'lab.json'), encodeUtf8(JSON.stringify(meta) + '\n'));
    return { sweepId, dir, manifest };
  }

  #reopen(sweepId: string): { sweepId: string; dir: string; manifest: SweepManifest } {
    const dir = this.#existing(sweepId);
    const manifest = readManifest(this.#io, dir);
    openSweepFolder(this.#io, dir, manifest);
    return { sweepId, dir, manifest };
  }

  #existing(sweepId: string): string {
    const dir = join(this.#dir, sweepId);
    if (!this.#io.exists(join(dir, 'sweep.json'))) throw new ApiError({ code: 'invalid-input', message: `There is no saved sweep ${sweepId}.`, fix: 'Reload the list of sweeps.' });
    return dir;
  }

  #summary(id: string, dir: string, manifest: SweepManifest, results: SweepResults): LabSweepSummary {
    const meta = this.#meta(dir, id, manifest.spec);
    const values = <T>(read: (row: SweepResults['rows'][number]) => T | null): T[] => [...new Set(results.rows.map(read).filter((v): v is T => v !== null))].sort();
    return {
      id,
      name: meta.name,
      createdAt: meta.createdAt,
      model: meta.model,
      points: manifest.points.length,
      complete: results.rows.length,
      status: this.#running.has(id) ? 'running' : results.rows.length === manifest.points.length ? 'complete' : 'partial',
      preset: manifest.spec.preset ?? null,
      backends: values((row) => (row.settings === null || row.settings.cacheMode === 'dynamic' ? null : row.settings.backend)),
      nbits: values((row) => (row.settings === null || row.settings.cacheMode === 'dynamic' ? null : row.settings.nbits)).sort((a, b) => a - b),
      groupSizes: values((row) => (row.settings === null || row.settings.cacheMode === 'dynamic' ? null : row.settings.groupSize)).sort((a, b) => a - b),
      axes: values((row) => (row.settings === null || row.settings.cacheMode === 'dynamic' ? null : `${row.settings.axisKey}/${row.settings.axisValue}`)),
      residualLengths: values((row) => (row.settings === null || row.settings.cacheMode === 'dynamic' ? null : row.settings.residualLength)).sort((a, b) => a - b),
      ...sweepBest(results.rows),
    };
  }

  #meta(dir: string, id: string, spec: SweepSpec): SweepMeta {
    try {
      const meta = JSON.parse(this.#io.readTextFile(join(dir, 'lab.json'))) as Partial<SweepMeta>;
      if (typeof meta.name === 'string' && typeof meta.createdAt === 'string' && typeof meta.model === 'string') return meta as SweepMeta;
    } catch {
      // a sweep folder made by the CLI has no lab.json: named by its id
    }
    return { name: id, createdAt: '', model: modelName(spec) };
  }

  #now(): Date {
    return this.#options.now?.() ?? new Date();
  }
}

/**
 * A Lab request's typed settings as the sweep's spec, by the function the page's preview used; a
 * request the page should not have sent (it shows the same problems) is refused in the same words.
 */
function specRequest(request: Extract<LabSweepRequest, { kind: 'new' }> | LabSpecSweepRequest): LabSpecSweepRequest {
  if (request.kind === 'spec') return request;
  const { spec, problems } = labSweepSpec(request.settings);
  if (problems.length > 0) throw new ApiError({ code: 'invalid-input', message: problems.join(' '), fix: 'Correct the values to sweep.' });
  return { kind: 'spec', name: request.name, spec, jobs: request.jobs };
}

async function modelLayerCount(model: string): Promise<number> {
  return (await readModelFiles(await resolveModelPath(model))).config.geometry.numLayers;
}

function modelName(spec: SweepSpec): string {
  const parts = spec.model.split(/[\\/]/).filter((part) => part !== '');
  return parts.at(-1) ?? spec.model;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
