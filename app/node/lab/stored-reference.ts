import { computeReferenceHidden, computeReferenceWindow, type EvalHooks, type EvalModel } from '../../lab/evaluate.js';
import type { ReferenceRows, ReferenceSource, WindowReference } from '../../lab/reference-source.js';
import { scoredRows, type EvalWindow } from '../../lab/windows.js';
import { createHash } from 'node:crypto';
import { freeArrayBuffer } from '../free-array-buffer.js';
import type { ReferenceEntry } from './reference-store.js';
import { sha256Floats, type StoredWindow } from './reference-window-file.js';
import { sameBits } from '../../tensor/same-bits.js';

/** An evaluation's reference, ready to read: what was computed now, and what had to be mended. */
export interface PreparedReference {
  /** reads each window from disk, verified; a window that fails its check is computed again (and noted) */
  readonly source: ReferenceSource;
  /** windows this evaluation computed before scoring (0: all came from the cache) */
  readonly windowsComputed: number;
  /** one line per window discarded and computed again, filled in as the evaluation reads */
  readonly notes: string[];
}

/**
 * The compact form (docs/eval-record.md "The compact form, exact"): `model.session` runs the source graph with
 * its final hidden state as an added output (reference-graphs.ts), and the LM head turns stored hidden
 * states back into logits, run on whichever session holds the weights then (app/lab/model-head.ts).
 */
export interface CompactReference {
  /** the hidden-state output of the model's graph */
  readonly hidden: string;
  /** `[rows, hiddenSize]` hidden states in, their `[rows, vocab]` float32 logits out (an array of their own: the caller frees it after use) */
  readonly headLogits: (hidden: Float32Array, hiddenSize: number) => Promise<Float32Array>;
  /** the whole sequence's hidden state, where the graph's head reads kept rows only (computeReferenceHidden) */
  readonly sequenceHidden?: string;
}

/**
 * Makes sure every window of `windows` is in `entry`: the missing ones are computed one at a time,
 * each written before the next (so a 100-window reference never sits in memory), then the windows
 * are read back one at a time as the evaluation asks for them. Each read checks the window's sha256
 * (reference-window-file.ts); a window that fails is removed, computed again from `model` (the
 * source graph's session stays open for the whole evaluation) and stored, and one line says so.
 * With `compact`, a window is stored as its hidden states when the head, run on them, gives the very
 * logits the graph returned (compared by sha256, so bit for bit), and as float32 logits otherwise; a
 * read recomputes the logits and checks them against that digest again, so what the evaluation scores
 * is always the full-float32 reference.
 */
export async function prepareReference(
  entry: ReferenceEntry, model: EvalModel, windows: readonly EvalWindow[], hooks: EvalHooks, compact?: CompactReference,
): Promise<PreparedReference> {
  const notes: string[] = [];
  const compute = async (window: EvalWindow): Promise<WindowReference> => {
    const computed = await computeReferenceWindow(model, window, hooks, compact?.hidden);
    await storeReferenceWindow(entry, window.index, computed, compact, notes);
    return computed;
  };
  // Before the evaluation: the compact form needs the logits' digest only, hashed as the run returns
  // them; float32 logits are computed again only where the head does not give that digest.
  const computeAhead = async (window: EvalWindow): Promise<void> => {
    if (compact === undefined) {
      await compute(window);
      return;
    }
    if (compact.sequenceHidden !== undefined && await storeFromHiddenPass(entry, window, model, hooks, compact, compact.sequenceHidden, notes)) return;
    const hash = createHash('sha256');
    const computed = await computeReferenceWindow(model, window, hooks, compact.hidden, (rows) => hash.update(floatBytes(rows)));
    const hidden = computed.hidden;
    if (hidden !== undefined && hidden.size < computed.vocab
      && await storeCompactWindow(entry, window.index, hidden, computed.vocab, hash.digest('hex'), compact, notes)) return;
    await compute(window);
  };
  // Stored windows are verified now, while the source graph's session is certainly open: on the graph
  // path the evaluation releases it before the rewritten graph's opens (weights once), so a damaged
  // window must be found and computed again here, not when the evaluation reads it.
  const missing = windows.filter((window) => {
    if (!entry.has(window.index)) return true;
    const read = entry.read(window.index, scoredRows(window));
    if (read.ok) return false;
    notes.push(`reference window ${window.index + 1} failed its check (${read.reason}): discarded and computed again.`);
    return true;
  });
  // One window at a time, each written before the next is computed: memory does not grow with the count.
  for (const [done, window] of missing.entries()) {
    await computeAhead(window);
    hooks.onProgress?.({ phase: 'reference', windowsDone: done + 1, windows: missing.length });
  }
  const byIndex = new Map(windows.map((window) => [window.index, window]));
  const source: ReferenceSource = {
    windows: windows.length,
    window: async (index): Promise<WindowReference> => {
      const window = byIndex.get(index);
      if (window === undefined) throw new RangeError(`the evaluation has no window ${index + 1}`);
      const read = entry.read(index, scoredRows(window));
      let reason = read.ok ? null : read.reason;
      if (read.ok && read.stored.kind === 'logits') return read.stored.window;
      if (read.ok && read.stored.kind === 'hidden') {
        const stored = read.stored;
        if (compact !== undefined) {
          const logits = new Float32Array((stored.hidden.length / stored.hiddenSize) * stored.vocab);
          const hash = createHash('sha256');
          await forEachHeadRun(compact, stored.hidden, stored.hiddenSize, stored.vocab, (rows, first) => {
            logits.set(rows, first * stored.vocab);
            hash.update(floatBytes(rows));
          });
          if (hash.digest('hex') === stored.logitsSha256) return { logits, vocab: stored.vocab };
          reason = 'its hidden states do not give the logits they were stored with';
        } else {
          reason = 'it holds hidden states and this model\'s LM head could not be cut';
        }
        entry.remove(index);
      }
      notes.push(`reference window ${index + 1} ${reason === 'missing' ? 'was removed from the cache meanwhile' : `failed its check (${reason})`}: discarded and computed again.`);
      return compute(window);
    },
    rows: async (index) => {
      const window = byIndex.get(index);
      if (window === undefined) throw new RangeError(`the evaluation has no window ${index + 1}`);
      if (compact === undefined) return null;
      const read = entry.read(index, scoredRows(window));
      // Anything but a readable compact window is `window`'s to read or mend (and note).
      return read.ok && read.stored.kind === 'hidden' ? headRows(compact, read.stored) : null;
    },
  };
  return { source, windowsComputed: missing.length, notes };
}

/** One window as the full-precision pass computed it: its scored rows' logits and, on the compact graph, their hidden states. */
export type ComputedWindow = Awaited<ReturnType<typeof computeReferenceWindow>>;

/**
 * Stores window `index` in `entry`: as its hidden states when the head, run on them, gives the very
 * logits the graph returned (compared by sha256, so bit for bit), as float32 logits otherwise (and
 * where hidden states are not smaller than the logits). `notes` gets one line when the head does not
 * reproduce the logits.
 */
export async function storeReferenceWindow(
  entry: ReferenceEntry, index: number, computed: ComputedWindow, compact: CompactReference | undefined, notes: string[],
): Promise<void> {
  // Hidden states only where they are smaller than the logits (a model whose hidden size reaches its vocabulary keeps logits).
  if (compact !== undefined && computed.hidden !== undefined && computed.hidden.size < computed.vocab
    && await storeCompactWindow(entry, index, computed.hidden, computed.vocab, sha256Floats(computed.logits), compact, notes)) return;
  entry.write(index, { kind: 'logits', window: computed });
}

/**
 * Computes and stores window `window` in the compact form from a pass that returns hidden states and
 * two rows of logits only (computeReferenceHidden): the head computes the scored rows' logits a few
 * rows at a time, their sha256 is stored, and the last scored row must be the graph's own bit for bit
 * (the head cut right, and its rows the ones a full pass computes: a row's logits do not depend on
 * the rows computed beside it, lm-head-split.ort.test.ts). False, with a note, where it is not, or
 * where the pass cannot be made so: the caller then computes the window the full way.
 */
async function storeFromHiddenPass(
  entry: ReferenceEntry, window: EvalWindow, model: EvalModel, hooks: EvalHooks, compact: CompactReference, sequenceHidden: string, notes: string[],
): Promise<boolean> {
  const pass = await computeReferenceHidden(model, window, hooks, sequenceHidden);
  if (pass === null || pass.hidden.size >= pass.vocab) return false;
  const { hidden, vocab, lastRow } = pass;
  const last = hidden.values.length / hidden.size - 1;
  const hash = createHash('sha256');
  let same = false;
  await forEachHeadRun(compact, hidden.values, hidden.size, vocab, (rows, first) => {
    hash.update(floatBytes(rows));
    const at = last - first;
    if (at >= 0 && (at + 1) * vocab <= rows.length) same = sameBits(rows.subarray(at * vocab, (at + 1) * vocab), lastRow);
  });
  if (!same) {
    noteHeadMismatch(notes);
    return false;
  }
  entry.write(window.index, { kind: 'hidden', hidden: hidden.values, hiddenSize: hidden.size, vocab, logitsSha256: hash.digest('hex') });
  return true;
}

function noteHeadMismatch(notes: string[]): void {
  if (!notes.some((note) => note.startsWith('the LM head'))) {
    notes.push('the LM head run alone does not give this graph\'s logits bit for bit here: the reference keeps float32 logits.');
  }
}

/**
 * Stores window `index` as its hidden states when the head, run on them, gives logits of this sha256
 * (the graph's own, so bit for bit); false otherwise, with one line in `notes` (the caller stores float32 logits).
 */
async function storeCompactWindow(
  entry: ReferenceEntry, index: number, hidden: { readonly values: Float32Array; readonly size: number }, vocab: number, logitsSha256: string,
  compact: CompactReference, notes: string[],
): Promise<boolean> {
  const again = createHash('sha256');
  await forEachHeadRun(compact, hidden.values, hidden.size, vocab, (rows) => again.update(floatBytes(rows)));
  if (again.digest('hex') !== logitsSha256) {
    noteHeadMismatch(notes);
    return false;
  }
  entry.write(index, { kind: 'hidden', hidden: hidden.values, hiddenSize: hidden.size, vocab, logitsSha256 });
  return true;
}

/**
 * Logits per head run, at most: the run's logits, their copy and the arena block onnxruntime keeps
 * for them stay at 16 MiB (27 rows at a 152k vocabulary) instead of a window's 255 rows three times
 * over (0.46 GiB); a small vocabulary takes the window in one run (each run is a one-token pass of
 * the whole model too). A row's logits do not depend on the rows run beside it
 * (lm-head-split.ort.test.ts: whole window, scored rows and single rows bit for bit), and the digest
 * of every window checks it again.
 */
const HEAD_LOGITS_PER_RUN = 1 << 22;

function headRowsPerRun(vocab: number): number {
  return Math.max(1, Math.floor(HEAD_LOGITS_PER_RUN / Math.max(1, vocab)));
}

/** The head run on `[rows, hiddenSize]` hidden states a few rows at a time: `each` gets each run's `[n, vocab]` logits and its first row. */
async function forEachHeadRun(
  compact: CompactReference, hidden: Float32Array, hiddenSize: number, vocab: number, each: (logits: Float32Array, firstRow: number) => void,
): Promise<void> {
  const rows = hidden.length / hiddenSize;
  const perRun = headRowsPerRun(vocab);
  for (let first = 0; first < rows; first += perRun) {
    const end = Math.min(rows, first + perRun);
    const logits = await compact.headLogits(hidden.subarray(first * hiddenSize, end * hiddenSize), hiddenSize);
    each(logits, first);
    freeArrayBuffer(logits.buffer);
  }
}

/**
 * A compact window's logits as the evaluation asks for them, row by row in order: the head runs on the
 * next few stored rows when a row not yet computed is asked for (16 MiB of logits at a time, the
 * window's 155 MB never held at once), and every run's logits go into the sha256 that must match the
 * stored one when the window is done.
 */
function headRows(compact: CompactReference, stored: Extract<StoredWindow, { kind: 'hidden' }>): ReferenceRows {
  const { hidden, hiddenSize, vocab } = stored;
  const rows = hidden.length / hiddenSize;
  const perRun = headRowsPerRun(vocab);
  const hash = createHash('sha256');
  let run: Float32Array = new Float32Array(0);
  let first = 0;
  let next = 0;
  const advance = async (): Promise<void> => {
    const end = Math.min(rows, next + perRun);
    // The previous run's rows are done with (valid until the next call): freed now, not at a later collection.
    freeArrayBuffer(run.buffer);
    run = await compact.headLogits(hidden.subarray(next * hiddenSize, end * hiddenSize), hiddenSize);
    hash.update(floatBytes(run));
    first = next;
    next = end;
  };
  return {
    row: async (scored) => {
      if (scored < first || scored >= rows) throw new RangeError(`row ${scored} of a window of ${rows} rows read out of order`);
      while (scored >= next) await advance();
      return run.subarray((scored - first) * vocab, (scored - first + 1) * vocab);
    },
    verified: async () => {
      while (next < rows) await advance();
      freeArrayBuffer(run.buffer);
      return hash.digest('hex') === stored.logitsSha256;
    },
  };
}

function floatBytes(values: Float32Array): Uint8Array {
  return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
}
