import type { DecoderSession, SessionOutputs } from './decoder-session.js';
import type { AbsorbResult, KvLane } from './kv-lane.js';
import { LogitsReader } from './logits-row.js';
import { outputsWithPresentPrefix } from './present-prefix.js';
import type { StepInputs } from './step-inputs.js';
import type { DecoderIo } from './decoder-io.js';

/**
 * Which logits rows a step reads: the next-token row (generation), one row per token fed (scoring a
 * text), or the last k rows (scoring the end of a chunk).
 */
export type LogitsRows = 'last' | 'all' | number;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * What one step fed and read. `updates` (StepRunner.step): how the lane's cache receives the tokens,
 * the sizes of the updates the token-by-token loop would have made, collapsed (they sum to the tokens
 * fed; default one update of all of them). A chunk that ends at a flush step is `[n - 1, 1]`:
 * QuantizedLayer tests its flush before appending, so n - 1 tokens then 1 leave the cache exactly as n
 * single tokens would (spec §1.3, consequence 2).
 */
export interface StepOutcome {
  /** everything the run returned (the caller frees what no lane references) */
  readonly outputs: SessionOutputs;
  /** `last`: the `[vocab]` row; otherwise `[rows, vocab]`, the last rows. Valid until the runner's next step, several float32 rows until `outputs` are freed (LogitsReader.readRows) */
  readonly logits: Float32Array;
  readonly vocab: number;
  /** the quantize events of every update, in order */
  readonly absorbed: AbsorbResult;
  /** KV bytes handed to the graph as past */
  readonly materializedKvBytes: number;
  /** the clock (`now`) when the feeds were ready, when the run resolved, and when the lane had absorbed it */
  readonly fedAt: number;
  readonly ranAt: number;
  readonly absorbedAt: number;
}

/**
 * One model step, the same for generation, the reference replay and evaluation (so the three share
 * their semantics by construction): token inputs for the lane's past length, the lane's past KV
 * feeds, `session.run`, the logits rows read (fp16 widened exactly), then present absorbed into the
 * lane. The session is the caller's (generate() wraps it to free dead outputs); runners over one
 * session may share one StepInputs, since runs never overlap.
 */
export class StepRunner {
  readonly #session: DecoderSession;
  readonly #inputs: StepInputs;
  readonly #io: DecoderIo;
  readonly #lane: KvLane;
  readonly #logits: LogitsReader;
  readonly #now: () => number;
  readonly #outcome: Mutable<StepOutcome> = {
    outputs: {}, logits: new Float32Array(0), vocab: 0, absorbed: { flushes: [], dequantizeMs: 0 }, materializedKvBytes: 0, fedAt: 0, ranAt: 0, absorbedAt: 0,
  };

  constructor(options: { session: DecoderSession; inputs: StepInputs; io: DecoderIo; lane: KvLane; now: () => number }) {
    this.#session = options.session;
    this.#inputs = options.inputs;
    this.#io = options.io;
    this.#lane = options.lane;
    this.#logits = new LogitsReader(options.io.logits);
    this.#now = options.now;
  }

  get lane(): KvLane {
    return this.#lane;
  }

  /**
   * One run. The outcome is the runner's own object, refilled by every step (read it before the next):
   * generation steps allocate nothing here (generation-speed.md: every allocation in the decode loop
   * brings the next scavenge closer, and one while a step's present tensors are live promotes them).
   */
  async step(tokens: readonly number[], logits: LogitsRows = 'last', updates?: readonly number[]): Promise<StepOutcome> {
    const rows = logitsRowCount(logits, tokens.length);
    const feeds = this.#inputs.feeds(tokens, this.#lane.seqLength, rows);
    const outcome = this.#outcome;
    outcome.materializedKvBytes = this.#lane.addFeeds(feeds);
    outcome.fedAt = this.#now();
    const outputs = await this.#session.run(feeds);
    outcome.ranAt = this.#now();
    outcome.outputs = outputs;
    outcome.logits = rows === 1 ? this.#logits.read(outputs) : this.#logits.readRows(outputs, rows);
    outcome.vocab = this.#logits.vocab;
    outcome.absorbed = this.#absorb(outputs, tokens.length, updates);
    outcome.absorbedAt = this.#now();
    return outcome;
  }

  /** Takes another runner's outputs as this lane's own (a prefill both lanes compute identically). */
  absorbShared(outputs: SessionOutputs, newTokens: number): AbsorbResult {
    return this.#lane.absorb(outputs, newTokens);
  }

  #absorb(outputs: SessionOutputs, newTokens: number, updates: readonly number[] | undefined): AbsorbResult {
    if (updates === undefined || updates.length <= 1) {
      if (updates !== undefined && updates[0] !== newTokens) throw new RangeError(`the updates ${JSON.stringify(updates)} do not add up to the ${newTokens} tokens fed`);
      return this.#lane.absorb(outputs, newTokens);
    }
    if (updates.some((n) => !Number.isInteger(n) || n < 1) || updates.reduce((a, b) => a + b, 0) !== newTokens) {
      throw new RangeError(`the updates ${JSON.stringify(updates)} must be positive and add up to the ${newTokens} tokens fed`);
    }
    const flushes: AbsorbResult['flushes'][number][] = [];
    let dequantizeMs = 0;
    let absorbedTokens = 0;
    const past = this.#lane.seqLength;
    for (const [index, n] of updates.entries()) {
      absorbedTokens += n;
      // Every update but the last sees present cut to the rows it covers (a copy); the last one, present itself.
      const view = index === updates.length - 1 ? outputs : outputsWithPresentPrefix(outputs, this.#io, past + absorbedTokens);
      const result = this.#lane.absorb(view, n);
      flushes.push(...result.flushes);
      dequantizeMs += result.dequantizeMs;
    }
    return { flushes, dequantizeMs };
  }
}

function logitsRowCount(logits: LogitsRows | undefined, tokens: number): number {
  if (logits === undefined || logits === 'last') return 1;
  if (logits === 'all') return tokens;
  if (!Number.isInteger(logits) || logits < 1 || logits > tokens) throw new RangeError(`cannot read ${logits} logits rows of a step that feeds ${tokens} tokens`);
  return logits;
}
