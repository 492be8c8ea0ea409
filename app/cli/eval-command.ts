import { formatEvalReport } from '../lab/eval-report.js';
import { createEvalRecord, serializeEvalRecord } from '../lab/eval-record.js';
import type { EvalProgress } from '../lab/evaluate.js';
import type { EvalResult } from '../lab/eval-result.js';
import type { EvalSettings } from '../lab/eval-settings.js';
import { stringifyJson } from '../protocol/json-numbers.js';
import { RunError } from '../protocol/run-error.js';
import { encodeUtf8 } from '../record/utf8.js';
import { formatBytes } from './byte-size.js';
import { evalSettingsFromOptions, type ReadStdin } from './eval-options.js';
import { LabProgress } from './lab-progress.js';
import { ExitCode, type CliIo } from './io.js';
import { optionalString, type RawOptions } from './options.js';
import { checkOutputFolder } from './output-folder.js';

/** A started evaluation (the Node host runs it in a lab worker thread). */
export interface EvalHandle {
  readonly done: Promise<EvalResult>;
  cancel(): void;
  dispose(): Promise<void>;
}

export interface EvalCommandRuntime {
  startEval(settings: EvalSettings, options: { perToken: boolean; onProgress: (progress: EvalProgress) => void }): EvalHandle;
  readonly readStdin?: ReadStdin;
  readonly stderrIsTty: boolean;
  readonly kvscopeVersion: string;
  now(): Date;
  /** Calls `onInterrupt` on Ctrl-C while the evaluation goes on; the returned function stops listening. */
  onInterrupt(onInterrupt: () => void): () => void;
}

/**
 * `kvscope eval`: a cache configuration scored on a text against the full-precision dynamic cache
 * (app/lab/evaluate.ts), llama.cpp's figures printed, optionally saved as an eval record. Exit 0 when
 * done, 2 when the preflight refuses the cache, 1 on bad input, a failure or Ctrl-C (nothing is
 * recorded for a cancelled evaluation).
 */
export async function runEvalCommand(options: RawOptions, io: CliIo, runtime: EvalCommandRuntime): Promise<ExitCode> {
  const settings = evalSettingsFromOptions(options, io, runtime.readStdin);
  const json = options['json'] === true;
  const out = optionalString(options, 'out');
  if (out !== undefined) {
    if (io.checkOutputPath !== undefined) io.checkOutputPath(out, '--out');
    else checkOutputFolder(io, out);
  }
  const progress = runtime.stderrIsTty ? new LabProgress(io.stderr) : undefined;
  const handle = runtime.startEval(settings, { perToken: options['per-token'] === true, onProgress: (p) => progress?.update(p) });
  const stopListening = runtime.onInterrupt(() => {
    progress?.clear();
    io.stderr('\nkvscope eval: cancelling (nothing will be recorded)…\n');
    handle.cancel();
  });
  try {
    const result = await handle.done;
    progress?.clear();
    let recordError: string | undefined;
    if (out !== undefined) {
      const record = createEvalRecord(result, { createdAt: runtime.now(), kvscopeVersion: runtime.kvscopeVersion });
      try {
        io.writeFileAtomic(out, encodeUtf8(serializeEvalRecord(record)));
      } catch (error) {
        // Checked before the eval, yet the write failed (a full disk): the figures are still printed, nothing half-written, and the command fails.
        recordError = `the eval finished but its record could not be written: ${(error as Error).message.split('\n')[0]}`;
      }
    }
    const wrote = out !== undefined && recordError === undefined;
    if (json) io.stdout(stringifyJson({ ok: recordError === undefined, ...evalJson(result), ...(wrote ? { record: out } : {}), ...(recordError !== undefined ? { recordError } : {}) }) + '\n');
    else io.stdout(formatEvalReport(result, formatBytes) + (wrote ? `wrote ${out}\n` : ''));
    if (recordError === undefined) return ExitCode.ok;
    io.stderr(`kvscope eval: ${recordError} Free space on that disk (or choose another --out) and run again; the figures above are complete.\n`);
    return ExitCode.badInput;
  } catch (error) {
    progress?.clear();
    if (!(error instanceof RunError)) throw error;
    if (json) io.stdout(stringifyJson({ ok: false, error: error.toPayload() }) + '\n');
    const fix = error.fix !== undefined && !error.message.includes(error.fix) ? `\n  fix: ${error.fix}` : '';
    io.stderr(`kvscope eval: ${error.message}${fix}\n`);
    return error.code === 'refused' ? ExitCode.refused : ExitCode.badInput;
  } finally {
    stopListening();
    await handle.dispose();
  }
}

/**
 * The `--json` contract of `kvscope eval` (docs/eval-record.md, "`kvscope eval --json`"): the record's
 * figures for scripts, the summary flattened to the top level; not the record itself, which also
 * holds the settings, per-window and per-layer figures and per-token columns (`--out` writes it).
 */
export function evalJson(result: EvalResult): Record<string, unknown> {
  const { kld, deltaP, ...summary } = result.summary;
  return {
    ...summary,
    kld,
    deltaP,
    bitsPerValue: result.memory.bitsPerValue,
    storedBytes: result.memory.storedBytes,
    windows: result.windows.count,
    context: result.windows.context,
    feed: result.feed,
    ...(result.dequantize === undefined ? {} : { dequantize: result.dequantize }),
    ...(result.dequantizeReason === undefined ? {} : { dequantizeReason: result.dequantizeReason }),
    // how the session computed, as the record says it (a sweep job's figures may differ in their last digits)
    ...(result.session === undefined ? {} : { session: result.session }),
    extensions: result.extensions,
    flushes: result.flushCounts,
    layerErrors: result.layerErrors,
    reference: result.reference,
    timings: result.timings,
  };
}
