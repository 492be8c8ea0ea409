import type { RecordedEvalSettings } from './eval-result.js';
import type { EvalRecord } from './eval-record.js';
import { writePoint, type PointFailureFile, type RetrievalPointRecord, type SweepManifest } from './sweep-folder.js';
import type { SweepFolderIo } from './sweep-folder-io.js';
import type { SweepPoint } from './sweep-points.js';
import { failedRow, fullReason, type PointStatus, type SweepRow } from './sweep-results.js';
import type { RunErrorPayload } from '../protocol/messages.js';

export interface SweepPointRecorderOptions {
  readonly io: SweepFolderIo;
  readonly dir: string;
  readonly manifest: SweepManifest;
  readonly randomSuffix: () => string;
  /** a point's folder was written (measured, refused or failed) */
  readonly onPointDone?: (point: SweepPoint, row: SweepRow) => void;
  /** stops the sweep: called once a file could not be written */
  readonly stop: () => void;
}

/**
 * How every sweep (the text eval's SweepRun and the retrieval sweep alike) records its points: a
 * point's folder written whole with its row, a refused or failed point as its failure file and a
 * line of the outcome's failures, and a file that could not be written as the sweep's storage
 * failure, which stops it with that point unrecorded (an I/O failure is never a result).
 */
export class SweepPointRecorder {
  readonly #options: SweepPointRecorderOptions;
  readonly #failures: string[] = [];
  #storageFailure: string | null = null;

  constructor(options: SweepPointRecorderOptions) {
    this.#options = options;
  }

  get failures(): readonly string[] {
    return this.#failures;
  }

  get storageFailure(): string | null {
    return this.#storageFailure;
  }

  /** Writes a measured point's folder and reports its row; false when it could not be written (the sweep stops). */
  measured(point: SweepPoint, settings: RecordedEvalSettings | null, outcome: { readonly record: EvalRecord } | { readonly retrieval: RetrievalPointRecord }, row: SweepRow): boolean {
    return this.#write(point, settings, outcome, row);
  }

  /** Writes a refused or failed point's folder and counts it among the failures. */
  failed(point: SweepPoint, settings: RecordedEvalSettings | null, status: Exclude<PointStatus, 'ok'>, error: RunErrorPayload): void {
    const failure: PointFailureFile = { format: 'kvscope-sweep-failure', version: 1, status, error };
    if (this.#write(point, settings, { failure }, failedRow(point.index, point.name, point.options, status, fullReason(error)))) {
      this.#failures.push(`point ${point.index} (${point.name}) ${status}: ${fullReason(error)}`);
    }
  }

  /** A file of the sweep could not be written: the first such reason is kept and the sweep stops. */
  storageFailed(reason: string): void {
    this.#storageFailure ??= reason;
    this.#options.stop();
  }

  /** A point's own file could not be written: the point stays unrecorded and the sweep stops. */
  pointStorageFailed(point: SweepPoint, reason: string): void {
    this.storageFailed(`point ${point.name} could not be recorded: ${reason.split('\n')[0]}`);
  }

  #write(point: SweepPoint, settings: RecordedEvalSettings | null, outcome: Parameters<typeof writePoint>[5], row: SweepRow): boolean {
    const { io, dir, manifest, randomSuffix } = this.#options;
    try {
      writePoint(io, dir, point, manifest.specSha256, settings, outcome, randomSuffix);
    } catch (error) {
      this.pointStorageFailed(point, error instanceof Error ? error.message : String(error));
      return false;
    }
    this.#options.onPointDone?.(point, row);
    return true;
  }
}
