import { createEvalRecord } from './eval-record.js';
import type { EvalProgress } from './evaluate.js';
import type { EvalResult } from './eval-result.js';
import type { EvalSettings } from './eval-settings.js';
import { readPointState, type SweepManifest } from './sweep-folder.js';
import { SweepPointRecorder } from './sweep-point-recorder.js';
import type { SweepFolderIo } from './sweep-folder-io.js';
import type { SweepPoint } from './sweep-points.js';
import { rowFromResult, type SweepRow } from './sweep-results.js';
import { toRunErrorPayload } from '../protocol/run-error.js';
import type { ReferenceSummary } from './lab-protocol.js';

/** How a sweep asks a worker to run a job (lab-protocol.ts LabJobOptions). */
interface JobOptions {
  readonly intraOpNumThreads?: number;
  /** the sweep's workers: every sweep job's sessions read the weights in place, so that any job count computes the same numbers */
  readonly sweepJobs?: number;
}

/** A lab worker as a sweep drives it (app/node/lab/lab-worker-client.ts): one job at a time, session kept warm. */
export interface SweepWorker {
  evaluate(settings: EvalSettings, options: JobOptions & { onProgress?: (progress: EvalProgress) => void }): { done: Promise<EvalResult>; cancel(): void };
  reference(settings: EvalSettings, options: JobOptions): { done: Promise<ReferenceSummary>; cancel(): void };
  dispose(): Promise<void>;
}

export interface SweepRunOptions {
  readonly io: SweepFolderIo;
  readonly dir: string;
  readonly manifest: SweepManifest;
  /** the points to run now (a shard's, minus the complete ones), in order */
  readonly points: readonly SweepPoint[];
  /** eval's settings for a point (an Error when its options do not parse: the point is recorded as failed) */
  readonly settingsForPoint: (point: SweepPoint) => EvalSettings | Error;
  /** one of the sweep's `jobs` workers (app/node/lab/sweep-job-worker.ts: with several, each a process of its own) */
  readonly startWorker: (jobs: number) => SweepWorker;
  readonly jobs: number;
  /** at most this many ORT threads per session (jobs × threads ≤ cores); undefined keeps kvscope's choice */
  readonly threadsPerJob?: number;
  readonly kvscopeVersion: string;
  readonly now: () => Date;
  readonly randomSuffix: () => string;
  readonly onPointStart?: (point: SweepPoint) => void;
  /** the reference was made sure of, before the points (computed windows and its size on disk) */
  readonly onReference?: (reference: ReferenceSummary) => void;
  /** a point's folder was written (measured, refused or failed) */
  readonly onPointDone?: (point: SweepPoint, row: SweepRow) => void;
}

export interface SweepRunOutcome {
  /** stopped by `stop` before every point ran, or every worker was lost with points left (they are not recorded) */
  readonly interrupted: boolean;
  /** one line per refused or failed point */
  readonly failures: readonly string[];
  /**
   * why the sweep stopped early because a file could not be written (a point's record, or a point
   * that failed writing its own files: a full disk, a read-only folder), or null. That point is not
   * recorded, so the next run redoes it: an I/O failure is never a result.
   */
  readonly storageFailure: string | null;
}

/**
 * Runs a sweep's points (the CLI's `kvscope sweep` and the Lab view alike): the reference once, on
 * the first worker, before the points fan out over `jobs` lab workers; each point's folder is
 * written whole when it ends (sweep-folder.ts). `stop` cancels the running points (nothing of them
 * is recorded) and starts no more. It never terminates a worker mid-point itself: a thread whose
 * onnxruntime session.run is in flight would abort the whole process natively (Napi::Error); the
 * workers go once their points have settled, or by their own cancel timeout (a job process's is
 * always armed: app/node/lab/sweep-job-worker.ts). A worker lost mid-point (a job process killed)
 * fails that point with its worker's error and takes no more; the others run the rest.
 */
export class SweepRun {
  readonly done: Promise<SweepRunOutcome>;
  readonly #options: SweepRunOptions;
  readonly #running = new Set<{ cancel(): void }>();
  readonly #workers: SweepWorker[] = [];
  readonly #recorder: SweepPointRecorder;
  #stopped = false;

  constructor(options: SweepRunOptions) {
    this.#options = options;
    this.#recorder = new SweepPointRecorder({ ...options, stop: () => this.stop() });
    this.done = this.#run();
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const job of this.#running) job.cancel();
  }

  async #run(): Promise<SweepRunOutcome> {
    const { points, jobs } = this.#options;
    const queue = [...points];
    try {
      if (points.length > 0) {
        const workers = Math.max(1, Math.min(jobs, points.length));
        for (let i = 0; i < workers; i++) this.#workers.push(this.#options.startWorker(workers));
        await this.#reference(queue[0]!);
        await Promise.all(this.#workers.map(async (worker) => {
          for (;;) {
            if (this.#stopped) return;
            const point = queue.shift();
            if (point === undefined) return;
            this.#options.onPointStart?.(point);
            // A lost worker (its process killed, its thread crashed) takes no more points: each would
            // fail at once with the same error, draining the queue the other workers could still run.
            if (await this.#point(point, worker) === 'worker-lost') return;
          }
        }));
      }
    } finally {
      await Promise.all(this.#workers.map((worker) => worker.dispose()));
    }
    const { failures, storageFailure } = this.#recorder;
    return { interrupted: (this.#stopped || queue.length > 0) && storageFailure === null, failures, storageFailure };
  }

  #threadOptions(): JobOptions {
    // The workers' sessions map the model's weights once between them (ort-decoder-session.ts SessionSharing).
    return {
      ...(this.#options.threadsPerJob === undefined ? {} : { intraOpNumThreads: this.#options.threadsPerJob }),
      sweepJobs: this.#workers.length,
    };
  }

  /** The reference before the points fan out: no two workers compute it side by side. */
  async #reference(first: SweepPoint): Promise<void> {
    const settings = this.#options.settingsForPoint(first);
    if (settings instanceof Error) return;
    const job = this.#workers[0]!.reference(settings, this.#threadOptions());
    this.#running.add(job);
    try {
      // Awaited apart: inside an optional call (`onReference?.(await …)`) it would be skipped when no one listens.
      const reference = await job.done;
      this.#options.onReference?.(reference);
    } catch (error) {
      // A reference that fails (an unreadable model) fails every point the same way: they say why.
      if (this.#stopped) return;
      void error;
    } finally {
      this.#running.delete(job);
    }
  }

  async #point(point: SweepPoint, worker: SweepWorker): Promise<'worker-lost' | undefined> {
    const settings = this.#options.settingsForPoint(point);
    if (settings instanceof Error) {
      this.#recorder.failed(point, null, 'failed', { ...toRunErrorPayload(settings), code: 'invalid-input' });
      return undefined;
    }
    const job = worker.evaluate(settings, this.#threadOptions());
    this.#running.add(job);
    let result: EvalResult;
    try {
      result = await job.done;
    } catch (error) {
      const payload = toRunErrorPayload(error);
      // A cancelled point leaves nothing behind: the next run does it again.
      if (payload.code === 'cancelled' || this.#stopped) return undefined;
      // The point's own files (its reference, say) could not be written: a fault of the disk, not of the point.
      if (payload.code === 'storage-failed') {
        this.#recorder.pointStorageFailed(point, payload.message);
        return undefined;
      }
      // Recorded as failed with its worker's error, which a resumed sweep runs again (sweep-folder.ts isSettled).
      this.#recorder.failed(point, recorded(settings), payload.code === 'refused' ? 'refused' : 'failed', payload);
      return payload.code === 'worker-crashed' || payload.code === 'cancel-timeout' ? 'worker-lost' : undefined;
    } finally {
      this.#running.delete(job);
    }
    const record = createEvalRecord(result, { createdAt: this.#options.now(), kvscopeVersion: this.#options.kvscopeVersion });
    this.#recorder.measured(point, record.settings, { record }, rowFromResult(point.index, point.name, point.options, result));
    return undefined;
  }
}

/** The points of `manifest` a run still has to do: those whose folder is not complete and settled. */
export function pointsToRun(io: SweepFolderIo, dir: string, manifest: SweepManifest, points: readonly SweepPoint[], settled: (state: ReturnType<typeof readPointState>) => boolean): SweepPoint[] {
  return points.filter((point) => !settled(readPointState(io, dir, point, manifest.specSha256)));
}

function recorded(settings: EvalSettings): EvalResult['settings'] {
  const { text, ...rest } = settings;
  return { ...rest, text: { name: text.name } };
}

