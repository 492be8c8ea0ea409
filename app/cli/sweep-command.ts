import { EvalInputError } from '../lab/lab-errors.js';
import { SENSITIVITY_PRESETS, type SensitivityPreset } from '../lab/sensitivity.js';
import { expandSweep, parseShard, shardPoints } from '../lab/sweep-points.js';
import { checkSweepSpec, parseSweepSpec, type EvalOptionTable, type SweepSpec } from '../lab/sweep-spec.js';
import type { SweepResults } from '../lab/sweep-results.js';
import { stringifyJson } from '../protocol/json-numbers.js';
import { encodeUtf8 } from '../record/utf8.js';
import { ExitCode, UsageError } from './io.js';
import { choiceOption, integerOption, optionalString, requireString, type RawOptions } from './options.js';
import { SweepRun, type SweepWorker } from '../lab/sweep-run.js';
import { parentFolder, readSweepText, settingsForPoint } from './sweep-point-settings.js';
import { collectResults, isSettled, openSweepFolder, readManifest, readPointState, writeResults, type SweepManifest } from '../lab/sweep-folder.js';
import type { SweepIo } from './sweep-io.js';
import { SweepProgress } from './sweep-progress.js';
import { formatBytes } from './byte-size.js';
import type { RetrievalCommandRuntime } from './retrieval-command.js';
import { isRetrievalSweep, RetrievalSweepRun } from './sweep-retrieval.js';

export interface SweepRuntime {
  /** eval's option table (main/cli's EVAL_OPTIONS): the spec's keys are checked against it */
  readonly evalOptions: EvalOptionTable;
  /** cores of this machine (os.availableParallelism) */
  readonly cores: number;
  /** one of the sweep's `jobs` workers (Node: app/node/lab/sweep-job-worker.ts) */
  startWorker(jobs: number): SweepWorker;
  /** the model's decoder layer count (for the `layers` preset) */
  modelLayerCount(model: string): Promise<number>;
  /** where the model's weights are, for what --jobs N costs */
  modelWeights(model: string): Promise<SweepModelWeights>;
  sha256(text: string): string;
  randomSuffix(): string;
  readonly stderrIsTty: boolean;
  readonly kvscopeVersion: string;
  now(): Date;
  onInterrupt(onInterrupt: () => void): () => void;
  /** runs a retrieval sweep's points (a spec whose points carry a task), as `kvscope eval --task` runs them */
  readonly retrieval?: RetrievalCommandRuntime;
}

/**
 * `kvscope sweep --spec sweep.json --out DIR [--jobs N] [--shard i/N]` (or `--preset layers|kv|runtimes --model M`
 * with eval's flags as the fixed settings), and `kvscope sweep merge DIR… [--out DIR]`. Points run in
 * lab worker threads, the reference once first; complete points are skipped on a rerun; Ctrl-C stops
 * the running points (nothing of them is recorded) and leaves the complete ones. Exit 0 when every
 * point of this run completed (refused and failed points are results), 1 on bad input or Ctrl-C, and
 * 1 when a point's record could not be written (a full disk): that point stays unrecorded for the next run.
 */
export async function runSweepCommand(positionals: readonly string[], options: RawOptions, io: SweepIo, runtime: SweepRuntime): Promise<ExitCode> {
  if (positionals[0] === 'merge') return runMerge(positionals.slice(1), options, io, runtime);
  if (positionals.length > 0) throw new UsageError(`kvscope sweep takes no arguments besides "merge DIR…", got ${JSON.stringify(positionals[0])}.`);
  const out = requireString(options, 'out');
  io.checkOutputDirectory?.(out, '--out');
  const jobsAsked = jobsOption(options);
  const spec = sweepSpecFromOptions(options, io, runtime);
  const specDir = optionalString(options, 'spec') === undefined ? '.' : parentFolder(requireString(options, 'spec'));
  const text = readSweepText(io, spec, specDir);
  const layerCount = spec.preset === 'layers' ? await runtime.modelLayerCount(spec.model) : 0;
  const points = expandSweep(spec, layerCount);
  const retrieval = isRetrievalSweep(spec, points);
  if (retrieval && runtime.retrieval === undefined) throw new UsageError('this kvscope cannot run retrieval points in a sweep; run kvscope sweep from the command line.');
  const shardOption = optionalString(options, 'shard');
  const shard = shardOption === undefined ? null : parseShard(shardOption);
  const manifest: SweepManifest = { format: 'kvscope-sweep', version: 1, specSha256: runtime.sha256(stringifyJson(spec)), spec, points, shard };
  openSweepFolder(io, out, manifest);
  const mine = shardPoints(points, shard);
  const todo = mine.filter((point) => !isSettled(readPointState(io, out, point, manifest.specSha256)));
  // a retrieval point is a series of runs that each take the machine's cores: one at a time
  if (retrieval && jobsAsked > 1) io.stderr(`kvscope sweep: retrieval points run one at a time (each run uses every core); --jobs ${jobsAsked} is not used.\n`);
  const jobs = retrieval ? 1 : Math.min(jobsAsked, Math.max(1, todo.length));
  // Threads per session so that jobs × threads ≤ cores: N sessions each with every core would fight.
  const threads = Math.max(1, Math.floor(runtime.cores / jobs));
  if (jobs > runtime.cores) io.stderr(`kvscope sweep: --jobs ${jobs} is more than this machine's ${runtime.cores} cores; points will compete for them.\n`);
  // Said before the work, as memory matters most on a large model (issue 23): a job is a worker thread
  // with a session of its own (onnxruntime-node's sessions cannot cross threads). External data is
  // memory-mapped and read in place by a sweep's sessions (ort-decoder-session.ts SessionSharing), so
  // the jobs share one copy of it; weights inside the .onnx are read in place too, through a derived
  // graph whose external data points into the .onnx (run-eval.ts plainEvalGraph).
  if (jobs > 1) io.stderr(await jobsMemoryLine(jobs, spec.model, runtime));
  io.stderr(`kvscope sweep: ${points.length} points${shard === null ? '' : `, shard ${shard.index}/${shard.count}: ${mine.length}`}; ${mine.length - todo.length} complete, ${todo.length} to run` +
    `${todo.length > 0 ? (jobs > 1 ? ` (${jobs} jobs × at most ${threads} thread${threads > 1 ? 's' : ''} each)` : ' (1 job)') : ''}\n`);

  const progress = runtime.stderrIsTty ? new SweepProgress(io.stderr, mine.length, mine.length - todo.length) : undefined;
  const run = retrieval ? new RetrievalSweepRun({
    io, dir: out, manifest, points: todo, runtime: runtime.retrieval!, randomSuffix: runtime.randomSuffix,
    onPointStart: (point) => progress?.start(point.name),
    onPointDone: (point, row) => progress?.finish(point.name, row.status),
  }) : new SweepRun({
    io, dir: out, manifest, points: todo, jobs,
    settingsForPoint: (point) => settingsForPoint(point, spec, text, io),
    startWorker: (workers) => runtime.startWorker(workers),
    ...(jobs > 1 ? { threadsPerJob: threads } : {}),
    kvscopeVersion: runtime.kvscopeVersion, now: () => runtime.now(), randomSuffix: runtime.randomSuffix,
    onReference: (reference) => {
      if (reference.bytes === undefined) return;
      progress?.clear();
      const what = reference.windowsComputed === undefined || reference.windowsComputed === 0 ? 'read from the cache' : `${reference.windowsComputed} window${reference.windowsComputed === 1 ? '' : 's'} computed and stored`;
      io.stderr(`kvscope sweep: reference ${what} (${formatBytes(reference.bytes)} on disk; kvscope cache list)\n`);
    },
    onPointStart: (point) => progress?.start(point.name),
    onPointDone: (point, row) => progress?.finish(point.name, row.status),
  });
  let interrupts = 0;
  const stopListening = runtime.onInterrupt(() => {
    interrupts++;
    progress?.clear();
    if (interrupts === 1) {
      io.stderr('\nkvscope sweep: stopping; running points are cancelled and not recorded…\n');
      run.stop();
    } else if (interrupts === 2) {
      // Never abort here: terminating a lab worker thread (--jobs 1) while onnxruntime's session.run is
      // in flight aborts the process natively (Napi::Error); the cancel is on its way, and a stuck job
      // process is killed by its cancel timeout (app/node/lab/sweep-job-worker.ts).
      io.stderr('kvscope sweep: already stopping; the running points end at their next step (SIGKILL stops at once; complete points are kept).\n');
    }
  });
  let outcome;
  try {
    outcome = await run.done;
  } finally {
    stopListening();
    progress?.clear();
  }
  let storageFailure = outcome.storageFailure;
  let results: SweepResults;
  try {
    results = writeResults(io, out, manifest);
  } catch (error) {
    // results.json/csv are derived: the table is still shown from the point folders, and the next run rewrites them
    results = collectResults(io, out, manifest);
    storageFailure ??= `the results table could not be written: ${(error as Error).message.split('\n')[0]}`;
  }
  if (options['json'] === true) io.stdout(stringifyJson(results) + '\n');
  else io.stdout(formatResultsTable(results));
  // Whole reasons, their later lines indented under the point: the table's column holds only the start.
  for (const line of outcome.failures) io.stderr(`kvscope sweep: ${line.replace(/\n/g, '\n  ')}\n`);
  if (storageFailure !== null) {
    // An I/O failure is never a result (issue 24): nothing was recorded for it, so the next run redoes it.
    io.stderr(`kvscope sweep: stopped: ${storageFailure}\n` +
      `kvscope sweep: free space on the disk holding ${out} (or fix its permissions, or use another --out), then run the same command again: ` +
      `the ${results.rows.length} complete point${results.rows.length === 1 ? ' is' : 's are'} kept and the unrecorded ones are redone.\n`);
    return ExitCode.badInput;
  }
  if (outcome.interrupted) {
    io.stderr(`kvscope sweep: interrupted with ${results.rows.length} of ${mine.length} points complete; run the same command again to resume.\n`);
    return ExitCode.badInput;
  }
  return ExitCode.ok;
}

/** Where a model's weights are, as a sweep's jobs hold them. */
export interface SweepModelWeights {
  /** bytes in external data files: memory-mapped, one copy for every job */
  readonly externalBytes: number;
  /**
   * bytes inside the decode graph's .onnx: read in place too (eval runs a derived graph whose external
   * data points into the .onnx, app/node/onnx/in-graph-model.ts ensureInPlaceModel), one copy for every job
   */
  readonly embeddedBytes: number;
  /** bytes inside a legacy prefill/decode pair's prefill graph, which runs as it is: parsed into each job's session */
  readonly perJobBytes: number;
}

/** What N jobs hold of the model's weights, as one stderr line. */
export async function jobsMemoryLine(jobs: number, model: string, runtime: SweepRuntime): Promise<string> {
  let weights: SweepModelWeights;
  try {
    weights = await runtime.modelWeights(model);
  } catch {
    // An unreadable model fails each point with its reason (sweep-run.ts); this line is no place for it.
    return `kvscope sweep: ${jobs} jobs: a single graph's weights (in external data or inside its .onnx) are memory-mapped and shared between them.\n`;
  }
  const { externalBytes, embeddedBytes, perJobBytes } = weights;
  const where = [
    ...(externalBytes > 0 ? [`${formatBytes(externalBytes)} of external data`] : []),
    ...(embeddedBytes > 0 ? [`${formatBytes(embeddedBytes)} inside the .onnx file, read in place`] : []),
  ];
  const perJob = perJobBytes > 0 ? ` The prefill graph's ${formatBytes(perJobBytes)} of weights inside its .onnx are held once per job (a legacy pair's prefill graph runs as it is); --jobs 1 holds them once.` : '';
  // RSS (top, ps, /usr/bin/time) counts a page once per mapping: once in each job's process (app/node/lab/sweep-job-worker.ts),
  // so the processes' RSS added up counts the shared weights once per job; PSS counts them once in all.
  return `kvscope sweep: the ${jobs} jobs, a process each, share one copy of the model's weights (${where.length === 0 ? '' : `${where.join(' and ')}, `}memory-mapped); each job adds its own working memory. ` +
    `Each job's RSS counts the shared weights once; the jobs' PSS (smaps_rollup) adds up to one copy.${perJob}\n`;
}

/** `--jobs N`: points at once, 1 or more (0 or -1 once ran one job without a word). */
function jobsOption(options: RawOptions): number {
  const jobs = integerOption(options, 'jobs', 1);
  if (jobs < 1) throw new UsageError(`--jobs must be 1 or more (the points run at once), got ${jobs}. Leave it out for one job at a time.`);
  return jobs;
}

/** The spec from `--spec FILE`, or from `--preset` with `--model` and eval's flags as the fixed settings. */
function sweepSpecFromOptions(options: RawOptions, io: SweepIo, runtime: SweepRuntime): SweepSpec {
  const specPath = optionalString(options, 'spec');
  const presetFlag = options['preset'] === undefined ? undefined : choiceOption<SensitivityPreset>(options, 'preset', SENSITIVITY_PRESETS);
  if (specPath !== undefined) {
    const spec = parseSweepSpec(io.readTextFile(specPath), runtime.evalOptions, specPath);
    return presetFlag === undefined ? spec : { ...spec, preset: presetFlag };
  }
  if (presetFlag === undefined) throw new UsageError('kvscope sweep needs --spec sweep.json, or --preset layers|kv|runtimes with --model.');
  const fixed: Record<string, string | boolean> = {};
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined || ['spec', 'preset', 'out', 'jobs', 'shard', 'json', 'model', 'text', 'text-ids'].includes(key)) continue;
    fixed[key] = value;
  }
  const text = optionalString(options, 'text');
  const textIds = optionalString(options, 'text-ids');
  return checkSweepSpec({
    model: requireString(options, 'model'), ...(text === undefined ? {} : { text }), ...(textIds === undefined ? {} : { 'text-ids': textIds }), fixed, preset: presetFlag,
  }, runtime.evalOptions, '--preset');
}

/** `kvscope sweep merge DIR… [--out DIR]`: one table from shard folders, identical to the unsharded sweep's. */
function runMerge(dirs: readonly string[], options: RawOptions, io: SweepIo, runtime: SweepRuntime): ExitCode {
  if (dirs.length === 0) throw new UsageError('kvscope sweep merge needs the shard folders: kvscope sweep merge DIR1 DIR2 … [--out DIR].');
  const manifests = dirs.map((dir) => readManifest(io, dir));
  const first = manifests[0]!;
  for (const [i, manifest] of manifests.entries()) {
    if (manifest.specSha256 !== first.specSha256) {
      throw new EvalInputError(`${dirs[i]} holds another sweep than ${dirs[0]} (their specs differ); only shards of one sweep can be merged.`);
    }
  }
  const out = optionalString(options, 'out') ?? dirs[0]!;
  io.checkOutputDirectory?.(out, '--out');
  const merged: SweepManifest = { ...first, shard: null };
  io.makeDirectory(out);
  const outManifest = io.joinPath(out, 'sweep.json');
  if (io.exists(outManifest) && readManifest(io, out).specSha256 !== merged.specSha256) {
    throw new EvalInputError(`${out} holds another sweep.`, 'Merge into a new --out folder.');
  }
  io.writeFileAtomic(outManifest, encodeUtf8(stringifyJson(merged, 1) + '\n'));
  let copied = 0;
  for (const point of merged.points) {
    if (readPointState(io, out, point, merged.specSha256).kind !== 'missing') continue;
    const source = dirs.find((dir) => readPointState(io, dir, point, merged.specSha256).kind !== 'missing');
    if (source === undefined) continue;
    io.copyDirectory(io.joinPath(source, point.name), io.joinPath(out, point.name));
    copied++;
  }
  const results = writeResults(io, out, merged);
  // A scheduler's log shows only this: name each point that did not measure, as the sweep itself does.
  const unmeasured = results.rows.filter((row) => row.status !== 'ok');
  for (const row of unmeasured) io.stderr(`kvscope sweep merge: point ${row.name} ${row.status}: ${(row.reason ?? '').split('\n')[0]}\n`);
  const failed = unmeasured.filter((row) => row.status === 'failed').length;
  const refused = unmeasured.length - failed;
  const missing = merged.points.length - results.rows.length;
  io.stderr(`kvscope sweep merge: ${results.rows.length} of ${merged.points.length} points in ${out} (${copied} copied)` +
    `${failed > 0 ? `; ${failed} failed` : ''}${refused > 0 ? `; ${refused} refused` : ''}${missing > 0 ? `; ${missing} missing: run their shards` : ''}\n`);
  if (options['json'] === true) io.stdout(stringifyJson(results) + '\n');
  else io.stdout(formatResultsTable(results));
  void runtime;
  return ExitCode.ok;
}

/** The results as a terminal table, llama.cpp's columns (a retrieval sweep's: its accuracies). */
export function formatResultsTable(results: SweepResults): string {
  if (results.rows.some((row) => row.retrieval !== undefined)) return formatRetrievalTable(results);
  const header = ['#', 'point', 'status', 'bits/value', 'runtime bits', 'PPL', 'ΔPPL', 'KLD mean', 'KLD p99', 'same top p', 'RMS Δp'];
  const rows = results.rows.map((row) => {
    const r = row.result;
    if (r === null) return [String(row.index), row.name, row.status, '', '', '', '', '', '', '', (row.reason ?? '').split('\n')[0]!.slice(0, 60)];
    return [
      // runtime bits: a runtime format's row bits as the runtime counts them (sweep-results.ts formatBitsPerValue)
      String(row.index), row.name, row.status, r.bitsPerValue.toFixed(2), r.formatBitsPerValue === undefined ? '' : r.formatBitsPerValue.toFixed(2), `${r.ppl.toFixed(4)} ± ${r.pplError.toFixed(4)}`,
      `${r.deltaPpl >= 0 ? '+' : ''}${r.deltaPpl.toFixed(4)} ± ${r.deltaPplError.toFixed(4)}`, `${r.kldMean.toFixed(6)} ± ${r.kldMeanError.toFixed(6)}`,
      r.kldP99.toFixed(5), `${(100 * r.top1Agreement).toFixed(2)} %`, `${(100 * r.deltaPRms).toFixed(3)} %`,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]): string => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

/** A retrieval sweep's table: each point's accuracy over its whole grid, the dynamic cache's on the same prompts, and the difference. */
function formatRetrievalTable(results: SweepResults): string {
  const header = ['#', 'point', 'status', 'task', 'accuracy', 'dynamic', 'Δ accuracy', 'samples'];
  const rows = results.rows.map((row) => {
    const r = row.retrieval;
    if (r === undefined) return [String(row.index), row.name, row.status, '', '', '', '', (row.reason ?? '').split('\n')[0]!.slice(0, 60)];
    const delta = r.accuracy - r.accuracyReference;
    return [String(row.index), row.name, row.status, r.task, r.accuracy.toFixed(2), r.accuracyReference.toFixed(2), `${delta >= 0 ? '+' : ''}${delta.toFixed(2)}`, String(r.samples)];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]): string => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}
