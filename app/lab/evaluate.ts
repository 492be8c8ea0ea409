import { sumLayerMemory, bitsPerValue, type LayerMemory } from '../cache/layer-memory.js';
import type { ModelConfig } from '../config/model-config.js';
import type { DecoderIo } from '../engine/decoder-io.js';
import type { DecoderSession } from '../engine/decoder-session.js';
import type { KvLane } from '../engine/kv-lane.js';
import { OutputReleasingSession } from '../engine/output-release.js';
import { PassThroughKvLane } from '../engine/dynamic-kv-lane.js';
import type { RunCachePlan } from '../engine/plan-run-cache.js';
import { passThroughLaneOptions, type InGraphLaneOptions } from '../engine/run-lane.js';
import { StepInputs } from '../engine/step-inputs.js';
import { planWindowChunks, type FeedMode } from './chunk-plan.js';
import { createEvalLane, quantizedSides } from './eval-lane.js';
import type { EvalSettings } from './eval-settings.js';
import { summarizeScores, type EvalSummary } from './eval-summary.js';
import { LayerErrorAccumulator, type LayerErrorSummary } from './layer-errors.js';
import type { ReferenceRows, ReferenceSource, WindowReference } from './reference-source.js';
import type { FlushMetrics } from '../engine/types.js';
import { concatTokenScores, emptyTokenScores, TokenScorer, type TokenScores } from './token-scores.js';
import { scoredRows, type EvalWindow } from './windows.js';
import { feedWindow, type FedRows, type WindowFeed } from './window-feed.js';
import { sameBits } from '../tensor/same-bits.js';

export interface EvalModel {
  readonly session: DecoderSession;
  readonly io: DecoderIo;
  readonly config: ModelConfig;
  /** set when `session` runs the in-graph dequantization rewrite of the graph `io` describes (evaluateCache only, quantized caches) */
  readonly inGraph?: InGraphLaneOptions;
  /** where `session` has an LM head input and returns its whole sequence's hidden state (evaluateCache only): ChunkHead */
  readonly head?: ChunkHead;
}

/**
 * A chunk's scored logits through the LM head input, a few rows at a time (issue 23): the chunk's run
 * returns its hidden states and its last two logits rows only, and the head computes the other rows
 * from the hidden states, 27 at a 152k vocabulary, on the same session. A 128-row chunk's logits
 * (78 MB a copy at a 152k vocabulary, three copies inside one run: the projection's, the bias add's,
 * the JavaScript one) were the eval's peak above the weights. A row's logits do not depend on the
 * rows computed beside it (lm-head-split.ort.test.ts), and each chunk checks it again: the head's
 * last two rows must be the run's own bit for bit, else the window is scored again the whole-chunk way.
 */
export interface ChunkHead {
  /** the session's `[1, fed, hiddenSize]` float32 output of the whole sequence's final hidden state */
  readonly sequenceHidden: string;
  /** `[rows, hiddenSize]` hidden states in, `[rows, vocab]` float32 logits out: an array of its own, handed back to `free` */
  readonly logits: (hidden: Float32Array) => Promise<Float32Array>;
  readonly free: (logits: Float32Array) => void;
}

/** Logits per head run at most (stored-reference.ts runs the reference's head at the same size): 27 rows at a 152k vocabulary. */
const HEAD_LOGITS_PER_RUN = 1 << 22;

/** The chunk's own logits rows the head's rows are checked against (two, not one: MLAS computes a one-row product another way unprepacked). */
const CHECKED_ROWS = 2;

/** The head did not give a chunk's own logits bit for bit: the window is scored again with every chunk's logits from its run. */
class HeadMismatch extends Error {}

export interface EvalProgress {
  readonly phase: 'reference' | 'eval';
  readonly windowsDone: number;
  readonly windows: number;
}

export interface EvalHooks {
  /** a monotonic clock in milliseconds */
  readonly now: () => number;
  readonly isCancelled?: () => boolean;
  readonly onProgress?: (progress: EvalProgress) => void;
  /** `chunked` (default) or `token-by-token` (the equivalence tests and the bench's peer) */
  readonly feedMode?: FeedMode;
}

/**
 * One window's full-precision reference: the dynamic cache (transformers' DynamicCache, the
 * pass-through lane) fed as token-by-token generation would, which for a dynamic cache is one
 * teacher-forced pass of the whole window (chunk-plan.ts); the host stores each window before it
 * computes the next (app/node/lab/stored-reference.ts), so memory does not grow with the number of
 * windows. Keeps the scored rows, prefill … length − 2: their float32 logits, `[scoredRows, vocab]`; with `hiddenOutput`
 * (a graph that also returns its final hidden state, app/onnx/rewrite/lm-head-split.ts) also those
 * rows' hidden state, `[scoredRows, hiddenSize]`, for a compact reference. With `onScoredLogits`
 * the logits are not kept (`logits` comes back empty): each run's scored rows go to it in order, as
 * views valid during the call (the compact reference needs only their digest: a window's float32
 * logits, 155 MB at 512 tokens and a 152k vocabulary, are then never held whole).
 */
export async function computeReferenceWindow(
  model: EvalModel, window: EvalWindow, hooks: EvalHooks, hiddenOutput?: string, onScoredLogits?: (rows: Float32Array) => void,
): Promise<WindowReference & { readonly hidden?: { readonly values: Float32Array; readonly size: number } }> {
  const feed = windowFeed(model, hooks);
  const lane = new PassThroughKvLane(passThroughLaneOptions(model.io, model.config));
  try {
    const count = scoredRows(window);
    let logits = new Float32Array(0);
    let vocab = 0;
    let hidden: { values: Float32Array; size: number } | undefined;
    const chunks = planWindowChunks(window.tokens.length, window.prefill, 'dynamic', 0, hooks.feedMode);
    await feedWindow(feed, lane, window, chunks, (rows) => {
      if (vocab === 0) {
        vocab = rows.vocab;
        if (onScoredLogits === undefined) logits = new Float32Array(count * vocab);
      }
      if (onScoredLogits === undefined) copyScoredRows(rows, window, logits, vocab);
      else scoredRowsOf(rows, window, onScoredLogits);
      if (hiddenOutput !== undefined) hidden = copyScoredHidden(rows, window, hiddenOutput, count, hidden);
    });
    return hidden === undefined ? { logits, vocab } : { logits, vocab, hidden };
  } finally {
    lane.dispose();
    feed.session.releaseAll();
  }
}

/** One window's pass for a compact reference (computeReferenceHidden). */
export interface ReferenceHiddenPass {
  /** `[scoredRows, hiddenSize]`: the scored rows' final hidden states */
  readonly hidden: { readonly values: Float32Array; readonly size: number };
  /** `[vocab]`: the last scored row's logits as the graph computed them in the pass */
  readonly lastRow: Float32Array;
  readonly vocab: number;
}

/**
 * One window's full-precision pass for a compact reference, on a graph that returns the whole
 * sequence's hidden state (`sequenceHidden`: app/node/lab/reference-graphs.ts): the dynamic cache fed
 * in the one run computeReferenceWindow makes, the same hidden states, but the logits of its last two
 * rows only (num_logits_to_keep 2: the last scored row and the one after it). A window's scored
 * logits are never computed in the pass: at 512 tokens and a 152k vocabulary they are 155 MB a copy,
 * and one run holds three (the projection's, the output's, the JavaScript one), the eval's peak
 * (issue 23). The LM head computes them from the hidden states a few rows at a time
 * (stored-reference.ts), and the last scored row's logits returned here check the head against the
 * graph. null where the window is not fed in one run (token by token).
 */
export async function computeReferenceHidden(
  model: EvalModel, window: EvalWindow, hooks: EvalHooks, sequenceHidden: string,
): Promise<ReferenceHiddenPass | null> {
  const chunks = planWindowChunks(window.tokens.length, window.prefill, 'dynamic', 0, hooks.feedMode);
  const count = scoredRows(window);
  if (chunks.length !== 1 || count < 1) return null;
  const feed = windowFeed(model, hooks);
  const lane = new PassThroughKvLane(passThroughLaneOptions(model.io, model.config));
  try {
    let pass: ReferenceHiddenPass | null = null;
    // The last two rows: positions length − 2 (the last scored one) and length − 1.
    await feedWindow(feed, lane, window, [{ ...chunks[0]!, rows: 2 }], (rows) => {
      const tensor = rows.outputs[sequenceHidden];
      if (tensor === undefined || tensor.type !== 'float32' || tensor.dims.at(-2) !== window.tokens.length) {
        throw new RangeError(`the reference graph returned no float32 ${sequenceHidden} for the window's ${window.tokens.length} tokens`);
      }
      const size = tensor.dims.at(-1)!;
      pass = {
        hidden: { values: tensor.data.slice(window.prefill * size, (window.prefill + count) * size), size },
        lastRow: rows.logits.slice(0, rows.vocab), vocab: rows.vocab,
      };
    });
    return pass;
  } finally {
    lane.dispose();
    feed.session.releaseAll();
  }
}

/** Where the dynamic cache's own pass (evaluateCache without a reference) puts each window's reference. */
export interface OwnReferenceSink {
  readonly hiddenOutput?: string;
  readonly store: (index: number, computed: WindowReference & { readonly hidden?: { readonly values: Float32Array; readonly size: number } }) => Promise<void>;
}

/** What one window of an evaluation measured. */
export interface WindowOutcome {
  readonly index: number;
  readonly start: number;
  readonly summary: EvalSummary;
}

export interface EvalOutcome {
  readonly windows: readonly WindowOutcome[];
  readonly summary: EvalSummary;
  /** every scored prediction, windows in order */
  readonly scores: TokenScores;
  /** per decoder layer at the end of the last window (a full context): stored bytes by component; null without a KV cache */
  readonly kvBytes: readonly (LayerMemory | null)[];
  readonly kvBytesTotal: LayerMemory;
  /** stored bits per cached value at the end of a window: codes, scale/zero and the full-precision residual */
  readonly bitsPerValue: number;
  /** per decoder layer: flushes in one window (the prefill's quantize is not one) */
  readonly flushCounts: readonly (number | null)[];
  readonly layerErrors: readonly LayerErrorSummary[];
  /** session runs and tokens fed, over all windows */
  readonly runs: number;
  readonly tokensFed: number;
  /** one line per window whose chunks' LM head rows were not their runs' own (scored again the whole-chunk way) */
  readonly notes: readonly string[];
}

/**
 * Scores the cache of `settings` on every window against the reference: each window gets a fresh
 * lane (a run's cache), fed as token-by-token generation would feed it (chunk-plan.ts), and every
 * scored row is compared with the reference's (token-scores.ts). `reference` null: the cache under
 * test is the reference itself (`--cache dynamic`, the base PPL): its pass is the reference's (the
 * same lane, the same single run per window), so the pass runs once, its scored rows are compared
 * with themselves (KLD exactly 0) and handed to `own.store` window by window (the store writes each
 * before the next is computed, so memory does not grow with the windows), with the scored rows' hidden
 * states where `own.hiddenOutput` names the graph's (the compact reference).
 */
export async function evaluateCache(
  model: EvalModel, settings: EvalSettings, cachePlan: RunCachePlan, windows: readonly EvalWindow[], reference: ReferenceSource | null, hooks: EvalHooks,
  own?: OwnReferenceSink,
): Promise<EvalOutcome> {
  if (reference === null && settings.cacheMode !== 'dynamic') throw new RangeError('only the dynamic cache is its own reference');
  const ownSink = own;
  const feed = windowFeed(model, hooks);
  const scorer = new TokenScorer();
  const errors = new LayerErrorAccumulator();
  const parts: TokenScores[] = [];
  const outcomes: WindowOutcome[] = [];
  let kvBytes: (LayerMemory | null)[] = [];
  let flushCounts: (number | null)[] = [];
  let runs = 0;
  let tokensFed = 0;
  const notes: string[] = [];
  // One window scored against `expected` (its whole logits) or `streamed` (its rows computed as they are scored).
  const scoreWindow = async (window: EvalWindow, expected: WindowReference | null, streamed: ReferenceRows | null, head: ChunkHead | null): Promise<ScoredWindow> => {
    const count = scoredRows(window);
    const own = reference === null ? { logits: new Float32Array(0), vocab: 0, hidden: undefined as { values: Float32Array; size: number } | undefined } : null;
    const scores = emptyTokenScores(count);
    const events: (readonly FlushMetrics[])[] = [];
    const lane: KvLane = createEvalLane(model.io, model.config, settings, cachePlan, hooks.now, model.inGraph);
    try {
      const planned = planWindowChunks(window.tokens.length, window.prefill, settings.cacheMode, settings.quantization.residualLength, hooks.feedMode);
      // Through the head: a chunk of more rows than are checked returns its last CHECKED_ROWS logits rows only.
      const chunkRows = new Map(planned.map((chunk) => [chunk.start, chunk.rows]));
      const chunks = head === null ? planned : planned.map((chunk) => (chunk.rows > CHECKED_ROWS ? { ...chunk, rows: CHECKED_ROWS } : chunk));
      const referenceRow = async (scored: number): Promise<Float32Array> => (streamed !== null ? streamed.row(scored)
        : expected!.logits.subarray(scored * expected!.vocab, (scored + 1) * expected!.vocab));
      const fed = await feedWindow(feed, lane, window, chunks, async (rows) => {
        if (own !== null) {
          if (own.vocab === 0) {
            own.vocab = rows.vocab;
            own.logits = new Float32Array(count * rows.vocab);
          }
          copyScoredRows(rows, window, own.logits, own.vocab);
          if (ownSink?.hiddenOutput !== undefined) own.hidden = copyScoredHidden(rows, window, ownSink.hiddenOutput, count, own.hidden);
          return;
        }
        const end = rows.first + rows.rows;
        const planRows = chunkRows.get(rows.fedFirst) ?? rows.rows;
        if (head !== null && planRows > rows.rows) {
          await scoreThroughHead(head, rows, end - planRows, window, count, async (position, row) => {
            const scored = position - window.prefill;
            scorer.score(await referenceRow(scored), row, window.tokens[position + 1]!, scores, scored);
          });
          return;
        }
        for (let r = 0; r < rows.rows; r++) {
          const position = rows.first + r;
          const scored = position - window.prefill;
          if (scored < 0 || scored >= count) continue;
          const row = rows.logits.subarray(r * rows.vocab, (r + 1) * rows.vocab);
          scorer.score(await referenceRow(scored), row, window.tokens[position + 1]!, scores, scored);
        }
      }, (flushes) => events.push(flushes));
      if (own !== null) {
        for (let scored = 0; scored < count; scored++) {
          const row = own.logits.subarray(scored * own.vocab, (scored + 1) * own.vocab);
          scorer.score(row, row, window.tokens[window.prefill + scored + 1]!, scores, scored);
        }
        await ownSink?.store(window.index, own.hidden === undefined ? { logits: own.logits, vocab: own.vocab } : { logits: own.logits, vocab: own.vocab, hidden: own.hidden });
      }
      return { scores, events, runs: fed.runs, kvBytes: lane.memory(), flushCounts: lane.flushCounts() };
    } finally {
      lane.dispose();
      feed.session.releaseAll();
    }
  };
  try {
    for (const window of windows) {
      // A compact window's reference rows come from the LM head a few at a time as they are scored
      // (its whole logits, 155 MB at 512 tokens and a 152k vocabulary, are never held: issue 23).
      const streamedRows = async (): Promise<ReferenceRows | null> => (reference?.rows === undefined ? null : reference.rows(window.index));
      let streamed = await streamedRows();
      const head = reference === null ? null : model.head ?? null;
      let scored: ScoredWindow;
      try {
        scored = await scoreWindow(window, reference === null || streamed !== null ? null : await reference.window(window.index), streamed, head);
      } catch (error) {
        if (!(error instanceof HeadMismatch)) throw error;
        // The head's rows were not the run's own: this window's chunks compute their logits in their runs, as without a head.
        notes.push(`window ${window.index + 1}: ${error.message}; scored again with every chunk's logits from its run.`);
        await streamed?.verified();
        streamed = await streamedRows();
        scored = await scoreWindow(window, streamed !== null ? null : await reference!.window(window.index), streamed, null);
      }
      if (streamed !== null && !await streamed.verified()) {
        // The stored hidden states did not give the logits they were stored with: the whole window's
        // read discards them, computes the window again (with a note), and the window is scored again.
        scored = await scoreWindow(window, await reference!.window(window.index), null, null);
      }
      for (const flushes of scored.events) errors.add(flushes);
      runs += scored.runs;
      tokensFed += window.tokens.length;
      kvBytes = scored.kvBytes;
      flushCounts = scored.flushCounts;
      parts.push(scored.scores);
      outcomes.push({ index: window.index, start: window.start, summary: summarizeScores(scored.scores) });
      hooks.onProgress?.({ phase: 'eval', windowsDone: outcomes.length, windows: windows.length });
    }
  } finally {
    feed.session.releaseAll();
  }
  const all = concatTokenScores(parts);
  const kvBytesTotal = sumLayerMemory(kvBytes);
  return {
    windows: outcomes,
    summary: summarizeScores(all),
    scores: all,
    kvBytes,
    kvBytesTotal,
    bitsPerValue: bitsPerValue(kvBytesTotal),
    flushCounts,
    layerErrors: errors.summary((layer) => quantizedSides(settings, layer, model.config.geometry.numLayers)),
    runs,
    tokensFed,
    notes,
  };
}

/**
 * Scores the fed rows `first` … of a run that returned its last CHECKED_ROWS logits rows and its whole
 * sequence's hidden state: the head computes their logits a few rows at a time, `each` gets the
 * scored ones in order, and the run's own rows must come out of the head bit for bit (HeadMismatch).
 */
async function scoreThroughHead(
  head: ChunkHead, rows: FedRows, first: number, window: EvalWindow, count: number, each: (position: number, row: Float32Array) => Promise<void>,
): Promise<void> {
  const tensor = rows.outputs[head.sequenceHidden];
  const fed = rows.first + rows.rows - rows.fedFirst;
  if (tensor === undefined || tensor.type !== 'float32' || tensor.dims.at(-2) !== fed) {
    throw new RangeError(`the evaluated graph returned no float32 ${head.sequenceHidden} for the run's ${fed} tokens`);
  }
  const size = tensor.dims.at(-1)!;
  const vocab = rows.vocab;
  const end = rows.first + rows.rows;
  const perRun = Math.max(1, Math.floor(HEAD_LOGITS_PER_RUN / Math.max(1, vocab)));
  for (let from = first; from < end; from += perRun) {
    const to = Math.min(end, from + perRun);
    const logits = await head.logits(tensor.data.subarray((from - rows.fedFirst) * size, (to - rows.fedFirst) * size));
    try {
      for (let position = from; position < to; position++) {
        const row = logits.subarray((position - from) * vocab, (position - from + 1) * vocab);
        if (position >= rows.first && !sameBits(row, rows.logits.subarray((position - rows.first) * vocab, (position - rows.first + 1) * vocab))) {
          throw new HeadMismatch(`the LM head's logits of position ${position} are not the run's own`);
        }
        const scored = position - window.prefill;
        if (scored >= 0 && scored < count) await each(position, row);
      }
    } finally {
      head.free(logits);
    }
  }
}

/** One window's evaluation before it is counted: its scores, its quantize events, and its cache at the end. */
interface ScoredWindow {
  readonly scores: TokenScores;
  readonly events: readonly (readonly FlushMetrics[])[];
  readonly runs: number;
  readonly kvBytes: (LayerMemory | null)[];
  readonly flushCounts: (number | null)[];
}

function windowFeed(model: EvalModel, hooks: EvalHooks): WindowFeed & { session: OutputReleasingSession } {
  const session = new OutputReleasingSession(model.session);
  return {
    session, inputs: new StepInputs(model.io, session.inputs), io: model.io, now: hooks.now,
    ...(hooks.isCancelled === undefined ? {} : { isCancelled: hooks.isCancelled }),
  };
}

/** Copies the scored positions' rows of a run's `[1, fed, hiddenSize]` float32 hidden-state output into `into` (made on the first run). */
function copyScoredHidden(
  rows: FedRows, window: EvalWindow, name: string, count: number, into: { values: Float32Array; size: number } | undefined,
): { values: Float32Array; size: number } {
  const tensor = rows.outputs[name];
  if (tensor === undefined || tensor.type !== 'float32') throw new RangeError(`the reference graph returned no float32 ${name}`);
  const size = tensor.dims.at(-1)!;
  const out = into ?? { values: new Float32Array(count * size), size };
  // A graph that keeps only the logits rows it is asked for (num_logits_to_keep, its own or derived:
  // logits-rows.ts) returns its hidden state for those rows alone: the rows end where the run's fed
  // tokens end, whether they are every fed position or the last few.
  const length = tensor.dims.at(-2)!;
  const first = rows.first + rows.rows - length;
  if (length > rows.first + rows.rows - rows.fedFirst) throw new RangeError(`the reference graph returned ${length} rows of ${name} for a run of fewer tokens`);
  for (let position = first; position < first + length; position++) {
    const scored = position - window.prefill;
    if (scored < 0 || scored >= count) continue;
    const at = position - first;
    out.values.set(tensor.data.subarray(at * size, (at + 1) * size), scored * size);
  }
  return out;
}

/** Copies the fed rows that a window scores (positions prefill … length − 2) into `out` ([scoredRows, vocab]). */
function copyScoredRows(rows: { logits: Float32Array; first: number; rows: number; vocab: number }, window: EvalWindow, out: Float32Array, vocab: number): void {
  const count = scoredRows(window);
  for (let r = 0; r < rows.rows; r++) {
    const scored = rows.first + r - window.prefill;
    if (scored < 0 || scored >= count) continue;
    out.set(rows.logits.subarray(r * vocab, (r + 1) * vocab), scored * vocab);
  }
}

/** Hands the fed rows that a window scores (positions prefill … length − 2) to `each`, as one view. */
function scoredRowsOf(rows: { logits: Float32Array; first: number; rows: number; vocab: number }, window: EvalWindow, each: (rows: Float32Array) => void): void {
  const first = Math.max(0, window.prefill - rows.first);
  const end = Math.min(rows.rows, window.prefill + scoredRows(window) - rows.first);
  if (end > first) each(rows.logits.subarray(first * rows.vocab, end * rows.vocab));
}
