import { z } from 'zod';
import type { RunCheck } from '../preflight/check-run.js';
import type { PreflightResult } from '../preflight/run-preflight.js';
import { readRunRecord } from '../record/parse-run-record.js';
import { RUN_ID_PATTERN, type RunRecord } from '../record/run-record.js';
import { method, returns } from './api-declaration.js';
import {
  arraySchema, choiceSchema, integerSchema, objectSchema, isPlainObject, patternSchema,
} from './protocol-schema.js';
import { quantizedCacheSettingsSchema } from './cache-settings-schema.js';
import { runSettingsSchema } from './run-settings-schema.js';
import {
  RUN_EXPORT_FORMATS, type FolderListing, type HistoryEntry, type ModelSource, type ModelSummary, type RunExport, type RunTicket, type WorkbenchEnvironment,
} from './workbench-api.js';

/**
 * THE declaration of the workbench API (the Lab's methods are in app/lab/lab-api-methods.ts): every
 * method's request type on the wire, its fields with their schemas (checked by the host on every
 * request, parse-api-message.ts), the client function's parameters, and its result. WorkbenchApi,
 * the preload's window.kvscope, both clients and the host's dispatch follow from this list; adding
 * a method is an entry here and its handler on the backend (workbench-backend.ts).
 */

/** Paths are strings without NUL (which no file system accepts and some APIs truncate at). */
export const pathSchema = patternSchema('a non-empty path', (text) => text.length > 0 && !text.includes('\0'));

/** A run id names a file in the run store, so it is held to the store's pattern here already. */
export const runIdSchema = patternSchema('a run id (letters, digits, ".", "_" and "-")', (id) => RUN_ID_PATTERN.test(id));

export const modelSourceSchema: z.ZodType<ModelSource> = z.discriminatedUnion('kind', [
  objectSchema({ kind: z.literal('folder'), path: pathSchema }),
  objectSchema({ kind: z.enum(['synthetic', 'synthetic-hybrid']) }),
], { error: (issue) => (isPlainObject(issue.input) ? 'one of folder, synthetic, synthetic-hybrid' : 'an object') });


export const WORKBENCH_METHODS = {
  environment: method({ type: 'environment', params: objectSchema({}), args: [], returns: returns<WorkbenchEnvironment>() }),
  /** Opens a model folder (or a config.json / .onnx inside one) or an embedded synthetic model. Never throws for a bad model: problems come back as diagnostics. */
  openModel: method({
    type: 'open-model', params: objectSchema({ source: modelSourceSchema, onnxFile: pathSchema.optional() }), args: ['source', 'onnxFile?'], returns: returns<ModelSummary>(),
  }),
  /** Native folder picker (Electron); null when cancelled or unsupported (browser: the UI asks for a path instead). */
  pickModelFolder: method({ type: 'pick-model-folder', params: objectSchema({}), args: [], returns: returns<string | null>() }),
  /** transformers' verdict plus what it misses, for this model and these settings */
  preflight: method({
    type: 'preflight',
    params: objectSchema({
      model: modelSourceSchema,
      settings: quantizedCacheSettingsSchema,
      // Any integers: the preflight itself reports lengths below 1 as diagnostics.
      sequenceLengths: arraySchema(integerSchema(Number.MIN_SAFE_INTEGER)).optional(),
    }),
    args: ['model', 'settings'], options: ['sequenceLengths'], returns: returns<PreflightResult>(),
  }),
  /**
   * The verdict on a run before it starts, as the run panel shows it on every edit: the prompt
   * tokenized as the run would (chat template, padding), the preflight on that length and the flushes
   * the run reaches, and when refused the nearest settings that run. Never throws for a bad model or
   * prompt: the refusal says why.
   */
  checkRun: method({ type: 'check-run', params: objectSchema({ settings: runSettingsSchema }), args: ['settings'], returns: returns<RunCheck>() }),
  /**
   * One folder of the host's file system for the model browser (null: start at home); folders and
   * model files only, a page of them from `offset` (default 0: the first page).
   */
  listFolder: method({
    type: 'list-folder', params: objectSchema({ path: pathSchema.nullable(), offset: integerSchema(0).optional() }), args: ['path', 'offset?'], returns: returns<FolderListing>(),
  }),
  /** Starts a run in the generation worker; events arrive through `handlers` until `done` or `error`. */
  startRun: method({ type: 'start-run', params: objectSchema({ settings: runSettingsSchema }), args: ['settings'], returns: returns<RunTicket>(), stream: 'run' }),
  /** the explicit cancel: stops the run at its next step (its events end with `run-done`, stopReason `cancelled`) */
  cancelRun: method({ type: 'cancel-run', params: objectSchema({ runId: runIdSchema }), args: ['runId'], returns: returns<null>(), void: true }),
  /** Saved runs, newest first, then the files of the runs folder that are not readable records (damaged). */
  listRuns: method({ type: 'list-runs', params: objectSchema({}), args: [], returns: returns<HistoryEntry[]>() }),
  /** A record holds non-finite numbers (an exact reconstruction's SNR is Infinity dB): read back through the record reader. */
  loadRun: method({
    type: 'load-run', params: objectSchema({ runId: runIdSchema }), args: ['runId'], returns: returns<RunRecord>(),
    readResult: (value) => readRunRecord(value, 'the run the server sent'),
  }),
  deleteRun: method({ type: 'delete-run', params: objectSchema({ runId: runIdSchema }), args: ['runId'], returns: returns<null>(), void: true }),
  /**
   * The export's file name and content; Electron also offers a save dialog (`saved` is then the path
   * written, or null when cancelled). `raw`: a damaged record's file as it is (a regular file within
   * the cap only), to mend or report it.
   */
  exportRun: method({
    type: 'export-run', params: objectSchema({ runId: runIdSchema, format: choiceSchema(RUN_EXPORT_FORMATS) }), args: ['runId', 'format'], returns: returns<RunExport>(),
  }),
  recentModels: method({ type: 'recent-models', params: objectSchema({}), args: [], returns: returns<ModelSource[]>() }),
} as const;

