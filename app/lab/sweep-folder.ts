import { EvalInputError } from './lab-errors.js';
import { parseEvalRecord, type EvalRecord } from './eval-record.js';
import type { RecordedEvalSettings } from './eval-result.js';
import { failedRow, fullReason, rowFromResult, rowFromRetrieval, sweepResultsCsv, type PointStatus, type SweepResults, type SweepRow } from './sweep-results.js';
import type { SweepPoint } from './sweep-points.js';
import type { SweepSpec, SweepValue } from './sweep-spec.js';
import { stringifyJson } from '../protocol/json-numbers.js';
import type { RunErrorPayload } from '../protocol/messages.js';
import { encodeUtf8 } from '../record/utf8.js';
import type { SweepFolderIo as SweepIo } from './sweep-folder-io.js';

/**
 * A sweep folder (STYLE.md §15): one folder per complete point, named from its settings, holding
 * settings.json and either eval.json (the eval record) or failure.json (refused or failed, with the
 * reason); sweep.json says which sweep (spec, expansion, shard) the folder belongs to; results.json and
 * results.csv are derived from the point folders, rebuilt after every run and never read back.
 * A point's folder is written under a hidden `.name.partial-*` name and renamed into place when
 * complete, so an interrupted sweep leaves only complete points (and partial folders the next run removes).
 */
export const SWEEP_FORMAT = 'kvscope-sweep';
const PARTIAL = /^\..+\.partial-[0-9a-z]+$/;

export interface SweepManifest {
  readonly format: typeof SWEEP_FORMAT;
  readonly version: 1;
  readonly specSha256: string;
  readonly spec: SweepSpec;
  /** every point of the sweep, all shards (merge needs no model to rebuild the table) */
  readonly points: readonly SweepPoint[];
  /** this folder's shard, or null for a whole (or merged) sweep */
  readonly shard: { readonly index: number; readonly count: number } | null;
}

export interface PointSettingsFile {
  readonly format: 'kvscope-sweep-point';
  readonly version: 1;
  readonly specSha256: string;
  readonly index: number;
  readonly name: string;
  readonly options: Readonly<Record<string, SweepValue>>;
  /** the resolved eval settings, when the options parsed */
  readonly settings: RecordedEvalSettings | null;
}

export interface PointFailureFile {
  readonly format: 'kvscope-sweep-failure';
  readonly version: 1;
  readonly status: Exclude<PointStatus, 'ok'>;
  readonly error: RunErrorPayload;
}

export type PointState =
  | { readonly kind: 'missing' }
  | { readonly kind: 'ok'; readonly record: EvalRecord }
  /** a retrieval point (spec with a task): its retrieval.json, the record `kvscope eval --task --out` writes */
  | { readonly kind: 'retrieval'; readonly record: RetrievalPointRecord }
  | { readonly kind: 'refused' | 'failed'; readonly failure: PointFailureFile };

/** What a retrieval point's retrieval.json holds (app/cli/retrieval-command.ts's record; only the fields the table reads are typed here). */
export interface RetrievalPointRecord {
  readonly kind: 'kvscope-retrieval';
  readonly task: string;
  readonly metric: string;
  readonly cache: string;
  readonly quantization: {
    readonly backend: string | number; readonly nbits: number; readonly axisKey: number; readonly axisValue: number;
    readonly groupSize: number; readonly residualLength: number;
  } | null;
  readonly map: RetrievalMapJson;
  readonly referenceMap: RetrievalMapJson | null;
  readonly samples: readonly { readonly length: number; readonly score: number; readonly kvBytes: number; readonly referenceScore?: number }[];
}

/** The depth × length map (app/lab/retrieval/grid.ts's AccuracyMap): rows depths (null for none), columns lengths. */
export interface RetrievalMapJson {
  readonly lengths: readonly number[];
  readonly depths: readonly (number | null)[];
  readonly accuracy: readonly (readonly (number | null)[])[];
}

/** Opens (or starts) a sweep folder for `manifest`; a folder of another sweep is refused. Stale partial folders go. */
export function openSweepFolder(io: SweepIo, dir: string, manifest: SweepManifest): void {
  io.makeDirectory(dir);
  const path = io.joinPath(dir, 'sweep.json');
  if (io.exists(path)) {
    const existing = readManifest(io, dir);
    if (existing.specSha256 !== manifest.specSha256) {
      throw new EvalInputError(`${dir} holds another sweep (its sweep.json has another spec).`, 'Use a new --out folder, or delete this one to start over.');
    }
    if (JSON.stringify(existing.shard) !== JSON.stringify(manifest.shard)) {
      throw new EvalInputError(`${dir} holds shard ${formatShard(existing.shard)} of this sweep, not ${formatShard(manifest.shard)}.`, 'Give each shard its own --out folder (kvscope sweep merge joins them).');
    }
  } else {
    io.writeFileAtomic(path, encodeUtf8(stringifyJson(manifest, 1) + '\n'));
  }
  for (const entry of io.listDirectory(dir)) if (PARTIAL.test(entry)) io.remove(io.joinPath(dir, entry));
}

export function readManifest(io: SweepIo, dir: string): SweepManifest {
  const path = io.joinPath(dir, 'sweep.json');
  if (!io.exists(path)) throw new EvalInputError(`${dir} is not a sweep folder (no sweep.json).`, 'Pass folders written by kvscope sweep --out.');
  let value: Partial<SweepManifest>;
  try {
    value = JSON.parse(io.readTextFile(path)) as Partial<SweepManifest>;
  } catch (error) {
    throw new EvalInputError(`${path} is not valid JSON: ${(error as Error).message}.`);
  }
  if (value.format !== SWEEP_FORMAT || value.version !== 1 || typeof value.specSha256 !== 'string' || !Array.isArray(value.points)) {
    throw new EvalInputError(`${path} is not a kvscope sweep manifest (format ${SWEEP_FORMAT}, version 1).`);
  }
  return value as SweepManifest;
}

/** What a point's folder holds: complete (measured, refused, failed) or nothing usable. */
export function readPointState(io: SweepIo, dir: string, point: SweepPoint, specSha256: string): PointState {
  const folder = io.joinPath(dir, point.name);
  const settingsPath = io.joinPath(folder, 'settings.json');
  if (!io.exists(settingsPath)) return { kind: 'missing' };
  try {
    const settings = JSON.parse(io.readTextFile(settingsPath)) as Partial<PointSettingsFile>;
    if (settings.specSha256 !== specSha256 || settings.index !== point.index || JSON.stringify(settings.options) !== JSON.stringify(point.options)) return { kind: 'missing' };
    const evalPath = io.joinPath(folder, 'eval.json');
    if (io.exists(evalPath)) return { kind: 'ok', record: parseEvalRecord(io.readTextFile(evalPath), evalPath) };
    const retrievalPath = io.joinPath(folder, 'retrieval.json');
    if (io.exists(retrievalPath)) {
      const record = JSON.parse(io.readTextFile(retrievalPath)) as RetrievalPointRecord;
      if (record.kind === 'kvscope-retrieval' && Array.isArray(record.samples) && typeof record.map === 'object' && record.map !== null) return { kind: 'retrieval', record };
      return { kind: 'missing' };
    }
    const failurePath = io.joinPath(folder, 'failure.json');
    if (io.exists(failurePath)) {
      const failure = JSON.parse(io.readTextFile(failurePath)) as PointFailureFile;
      if ((failure.status === 'refused' || failure.status === 'failed') && typeof failure.error?.message === 'string') return { kind: failure.status, failure };
    }
  } catch {
    // unreadable: redone
  }
  return { kind: 'missing' };
}

/** Whether a rerun keeps a point: measured, refused, or failed for a reason that will not change (its own settings). */
export function isSettled(state: PointState): boolean {
  return state.kind === 'ok' || state.kind === 'retrieval' || state.kind === 'refused' || (state.kind === 'failed' && state.failure.error.code === 'invalid-input');
}

/** Writes a point's folder as a whole: a partial folder first, renamed into place when complete. */
export function writePoint(
  io: SweepIo, dir: string, point: SweepPoint, specSha256: string, settings: RecordedEvalSettings | null,
  outcome: { readonly record: EvalRecord } | { readonly retrieval: RetrievalPointRecord } | { readonly failure: PointFailureFile }, random: () => string,
): void {
  const partial = io.joinPath(dir, `.${point.name}.partial-${random()}`);
  io.makeDirectory(partial);
  const settingsFile: PointSettingsFile = { format: 'kvscope-sweep-point', version: 1, specSha256, index: point.index, name: point.name, options: point.options, settings };
  try {
    io.writeFileAtomic(io.joinPath(partial, 'settings.json'), encodeUtf8(stringifyJson(settingsFile, 1) + '\n'));
    if ('record' in outcome) io.writeFileAtomic(io.joinPath(partial, 'eval.json'), encodeUtf8(stringifyJson(outcome.record, 1) + '\n'));
    else if ('retrieval' in outcome) io.writeFileAtomic(io.joinPath(partial, 'retrieval.json'), encodeUtf8(stringifyJson(outcome.retrieval, 1) + '\n'));
    else io.writeFileAtomic(io.joinPath(partial, 'failure.json'), encodeUtf8(stringifyJson(outcome.failure, 1) + '\n'));
  } catch (error) {
    // Nothing of the point stays (a full disk gets its space back now; the next run removes what this cannot).
    try {
      io.remove(partial);
    } catch {
      // the next openSweepFolder removes stale partial folders
    }
    throw error;
  }
  const final = io.joinPath(dir, point.name);
  io.remove(final);
  io.rename(partial, final);
}

/** The results of a folder's complete points (what results.json holds), read from the point folders. */
export function collectResults(io: SweepIo, dir: string, manifest: SweepManifest): SweepResults {
  const rows: SweepRow[] = [];
  for (const point of manifest.points) {
    const state = readPointState(io, dir, point, manifest.specSha256);
    if (state.kind === 'ok') rows.push(rowFromResult(point.index, point.name, point.options, state.record));
    else if (state.kind === 'retrieval') rows.push(rowFromRetrieval(point.index, point.name, point.options, state.record));
    else if (state.kind !== 'missing') rows.push(failedRow(point.index, point.name, point.options, state.kind, fullReason(state.failure.error)));
  }
  return { format: 'kvscope-sweep-results', version: 1, specSha256: manifest.specSha256, points: manifest.points.length, rows };
}

/** results.json and results.csv of a folder, rebuilt from its complete points. */
export function writeResults(io: SweepIo, dir: string, manifest: SweepManifest): SweepResults {
  const results = collectResults(io, dir, manifest);
  io.writeFileAtomic(io.joinPath(dir, 'results.json'), encodeUtf8(stringifyJson(results, 1) + '\n'));
  io.writeFileAtomic(io.joinPath(dir, 'results.csv'), encodeUtf8(sweepResultsCsv(results)));
  return results;
}

function formatShard(shard: SweepManifest['shard']): string {
  return shard === null ? 'none (the whole sweep)' : `${shard.index}/${shard.count}`;
}
