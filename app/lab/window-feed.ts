import type { DecoderIo } from '../engine/decoder-io.js';
import type { SessionOutputs } from '../engine/decoder-session.js';
import type { KvLane } from '../engine/kv-lane.js';
import type { OutputReleasingSession } from '../engine/output-release.js';
import type { StepInputs } from '../engine/step-inputs.js';
import { StepRunner } from '../engine/step-runner.js';
import type { FlushMetrics } from '../engine/types.js';
import type { EvalChunk } from './chunk-plan.js';
import { EvalCancelledError } from './eval-cancelled.js';
import type { EvalWindow } from './windows.js';

export interface WindowFeed {
  readonly session: OutputReleasingSession;
  readonly inputs: StepInputs;
  readonly io: DecoderIo;
  readonly now: () => number;
  /** polled before every run */
  readonly isCancelled?: () => boolean;
}

export interface FedRows {
  /** `[rows, vocab]`: the logits of positions `first` … first + rows − 1 (the runner's buffer: read it now) */
  readonly logits: Float32Array;
  readonly first: number;
  readonly rows: number;
  readonly vocab: number;
  /** every output of the run (freed after the callback), and the position of its first token fed */
  readonly outputs: SessionOutputs;
  readonly fedFirst: number;
}

/**
 * Feeds one window through `lane` run by run (chunk-plan.ts), through the step runner that
 * generation uses, and hands over the logits rows of each run and its quantize events. Every output
 * no lane references is freed after each run (output-release.ts), as generate() does.
 */
export async function feedWindow(
  feed: WindowFeed, lane: KvLane, window: EvalWindow, chunks: readonly EvalChunk[],
  onRows: (rows: FedRows) => void | Promise<void>, onEvents: (events: readonly FlushMetrics[]) => void = () => undefined,
): Promise<{ runs: number }> {
  const runner = new StepRunner({ session: feed.session, inputs: feed.inputs, io: feed.io, lane, now: feed.now });
  let runs = 0;
  for (const chunk of chunks) {
    if (feed.isCancelled?.() === true) throw new EvalCancelledError();
    const tokens = window.tokens.slice(chunk.start, chunk.end);
    const outcome = await runner.step(tokens, chunk.rows === 1 ? 'last' : chunk.rows, chunk.updates);
    runs++;
    await onRows({ logits: outcome.logits, first: chunk.end - chunk.rows, rows: chunk.rows, vocab: outcome.vocab, outputs: outcome.outputs, fedFirst: chunk.start });
    if (outcome.absorbed.flushes.length > 0) onEvents(outcome.absorbed.flushes);
    feed.session.releaseUnreferenced((buffer) => lane.references(buffer));
  }
  return { runs };
}
