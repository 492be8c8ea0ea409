import { RunError, toRunErrorPayload } from '../protocol/run-error.js';
import type { RunErrorPayload } from '../protocol/messages.js';
import { stringifyJson } from '../protocol/json-numbers.js';
import { encodeUtf8 } from '../record/utf8.js';
import type { RetrievalPointRecord, SweepManifest } from '../lab/sweep-folder.js';
import { SweepPointRecorder } from '../lab/sweep-point-recorder.js';
import type { SweepPoint } from '../lab/sweep-points.js';
import { rowFromRetrieval, type SweepRow } from '../lab/sweep-results.js';
import type { SweepRunOutcome } from '../lab/sweep-run.js';
import type { SweepSpec } from '../lab/sweep-spec.js';
import { UsageError } from './io.js';
import {
  evaluateRetrieval, retrievalPlan, retrievalRecord, retrievalRunErrorFix, RETRIEVAL_OPTION_SPECS,
  type ReferenceDecode, type ReferenceStore, type RetrievalCommandRuntime, type RetrievalControl,
} from './retrieval-command.js';
import type { SweepIo } from './sweep-io.js';

/**
 * A sweep whose points carry a task (`"task": "passkey"` with lengths, depths, samples, seed among
 * fixed, grid or points): each point is `kvscope eval --task` with the point's cache, run as that
 * command runs it (retrieval-command.ts), and its record is the point's retrieval.json. The
 * full-precision dynamic cache decodes each prompt once per sweep: its decodes are kept in the
 * sweep folder's retrieval-reference.json, shared by every point (and by a resumed run). Points run
 * one at a time (each run already uses the machine's cores).
 */
export const RETRIEVAL_REFERENCE_FILE = 'retrieval-reference.json';

/** Keys only a retrieval point takes: a point without `task` giving one of them is a mistake, said before anything runs. */
const RETRIEVAL_ONLY_KEYS = Object.keys(RETRIEVAL_OPTION_SPECS).filter((key) => key !== 'task');

/** Whether the sweep's points are retrieval points: all of them, or none (a mix is refused). */
export function isRetrievalSweep(spec: SweepSpec, points: readonly SweepPoint[]): boolean {
  const withTask = points.filter((point) => point.options['task'] !== undefined);
  if (withTask.length === 0) {
    const stray = points.flatMap((point) => RETRIEVAL_ONLY_KEYS.filter((key) => point.options[key] !== undefined))[0];
    if (stray !== undefined) throw new UsageError(`the sweep key "${stray}" belongs to a retrieval eval; give "task" (passkey, niah-single, …) beside it, or drop "${stray}".`);
    return false;
  }
  if (withTask.length < points.length) {
    const without = points.find((point) => point.options['task'] === undefined)!;
    throw new UsageError(`point ${without.name} has no "task" while others have one; a sweep is all retrieval points or none. Put "task" in "fixed" (or in every point).`);
  }
  const text = spec['text-ids'] !== undefined ? 'text-ids' : spec.text !== undefined ? 'text' : undefined;
  if (text !== undefined) throw new UsageError(`"${text}" gives the text evaluation's text; a retrieval sweep generates its prompts. Drop "${text}" from the spec.`);
  return true;
}

export interface RetrievalSweepOptions {
  readonly io: SweepIo;
  readonly dir: string;
  readonly manifest: SweepManifest;
  readonly points: readonly SweepPoint[];
  readonly runtime: RetrievalCommandRuntime;
  readonly randomSuffix: () => string;
  readonly onPointStart?: (point: SweepPoint) => void;
  readonly onPointDone?: (point: SweepPoint, row: SweepRow) => void;
}

/** Runs a retrieval sweep's points in order; `stop` cancels the running one (nothing of it is recorded) and starts no more. */
export class RetrievalSweepRun {
  readonly done: Promise<SweepRunOutcome>;
  readonly #options: RetrievalSweepOptions;
  readonly #control: RetrievalControl;
  readonly #recorder: SweepPointRecorder;
  #stopped = false;

  constructor(options: RetrievalSweepOptions) {
    this.#options = options;
    this.#control = { cancelled: () => this.#stopped };
    this.#recorder = new SweepPointRecorder({ ...options, stop: () => this.stop() });
    this.done = this.#run();
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#control.running?.cancel();
  }

  async #run(): Promise<SweepRunOutcome> {
    const store = referenceFileStore(this.#options.io, this.#options.dir, this.#options.manifest.specSha256, (reason) => {
      this.#recorder.storageFailed(`the reference's decodes could not be recorded: ${reason.split('\n')[0]}`);
    });
    for (const point of this.#options.points) {
      if (this.#stopped) break;
      this.#options.onPointStart?.(point);
      await this.#point(point, store);
    }
    const { failures, storageFailure } = this.#recorder;
    return { interrupted: this.#stopped && storageFailure === null, failures, storageFailure };
  }

  async #point(point: SweepPoint, store: ReferenceStore): Promise<void> {
    const { io, manifest, runtime } = this.#options;
    const raw: Record<string, string | boolean> = { model: manifest.spec.model };
    for (const [key, value] of Object.entries(point.options)) {
      if (typeof value === 'boolean') {
        if (value) raw[key] = true;
      } else {
        raw[key] = String(value);
      }
    }
    let plan;
    try {
      plan = retrievalPlan(raw, io);
    } catch (error) {
      if (!(error instanceof Error)) throw error;
      this.#recorder.failed(point, null, 'failed', { ...toRunErrorPayload(error), code: 'invalid-input' });
      return;
    }
    let result;
    try {
      result = await evaluateRetrieval(plan, io, runtime, this.#control, { prefix: `kvscope sweep: point ${point.name}`, referenceStore: store });
    } catch (error) {
      if (this.#stopped) return;
      if (error instanceof RunError) {
        const fix = retrievalRunErrorFix(error, plan.maxNewTokens);
        const payload: RunErrorPayload = { ...error.toPayload(), ...(fix === undefined ? {} : { fix }) };
        this.#recorder.failed(point, null, error.code === 'refused' ? 'refused' : 'failed', payload);
        return;
      }
      // a usage error of the point's own (a length below the bare prompt): the point fails, the sweep goes on
      if (error instanceof UsageError) {
        this.#recorder.failed(point, null, 'failed', { ...toRunErrorPayload(error), code: 'invalid-input' });
        return;
      }
      this.#recorder.failed(point, null, 'failed', toRunErrorPayload(error));
      return;
    }
    // cancelled: nothing of the point is recorded, the next run does it again
    if (result === null) return;
    const record = retrievalRecord(result, runtime) as unknown as RetrievalPointRecord;
    this.#recorder.measured(point, null, { retrieval: record }, rowFromRetrieval(point.index, point.name, point.options, record));
  }
}

interface ReferenceFile {
  readonly format: 'kvscope-sweep-retrieval-reference';
  readonly version: 1;
  readonly specSha256: string;
  /** reference settings + prompt digest → the dynamic cache's decode */
  readonly decodes: Readonly<Record<string, ReferenceDecode>>;
}

/**
 * The sweep's reference decodes, read from its folder and written back whole after each new one, so
 * a resumed sweep (or a later point) decodes no prompt twice. A file of another sweep, or unreadable,
 * is started over (it is derived: a decode is redone, never wrong).
 */
function referenceFileStore(io: SweepIo, dir: string, specSha256: string, onWriteFailure: (reason: string) => void): ReferenceStore {
  const path = io.joinPath(dir, RETRIEVAL_REFERENCE_FILE);
  const decodes = new Map<string, ReferenceDecode>();
  if (io.exists(path)) {
    try {
      const file = JSON.parse(io.readTextFile(path)) as Partial<ReferenceFile>;
      if (file.format === 'kvscope-sweep-retrieval-reference' && file.specSha256 === specSha256 && typeof file.decodes === 'object' && file.decodes !== null) {
        for (const [key, decode] of Object.entries(file.decodes)) {
          if (typeof decode?.text === 'string' && typeof decode.kvBytes === 'number') decodes.set(key, decode);
        }
      }
    } catch {
      // unreadable: the decodes are redone
    }
  }
  return {
    get: (key) => decodes.get(key),
    set: (key, decode) => {
      decodes.set(key, decode);
      const file: ReferenceFile = { format: 'kvscope-sweep-retrieval-reference', version: 1, specSha256, decodes: Object.fromEntries(decodes) };
      try {
        io.writeFileAtomic(path, encodeUtf8(stringifyJson(file, 1) + '\n'));
      } catch (error) {
        onWriteFailure(error instanceof Error ? error.message : String(error));
      }
    },
  };
}
