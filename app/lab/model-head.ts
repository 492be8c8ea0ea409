import type { DecoderIo } from '../engine/decoder-io.js';
import type { DecoderSession, SessionFeeds, SessionOutputs } from '../engine/decoder-session.js';
import type { KvLane } from '../engine/kv-lane.js';
import { StepInputs } from '../engine/step-inputs.js';

/**
 * The LM head run on the model's own session (issue 23: the weights once). The compact reference
 * stores hidden states and recomputes their logits; a head session of its own would hold the head's
 * weight a second time (on a tied-embedding model the vocabulary × hidden matrix, prepacked: 0.5 GiB
 * at Qwen2.5-0.5B's size, and twice that while it loads). Instead the model's graph takes extra hidden
 * rows just before its head (app/onnx/rewrite/lm-head-split.ts `withHeadInput`), and a one-token run
 * on a fresh cache returns their logits after its own row, bit for bit the full graph's
 * (lm-head-split.ort.test.ts; every stored window's logits digest checks it again).
 */
export interface HeadInput {
  /** the graph input, `[1, rows, hiddenSize]` float32 */
  readonly name: string;
  readonly hiddenSize: number;
}

/**
 * `session` with the head input fed zero rows on every run that does not feed it, and left out of
 * its inputs: the engine's checks and feeds never see it, and every run computes what the source graph does.
 */
export function withHeadInputDefault(session: DecoderSession, head: HeadInput): DecoderSession {
  const none = { type: 'float32', dims: [1, 0, head.hiddenSize], data: new Float32Array(0) } as const;
  return {
    inputs: session.inputs.filter((input) => input.name !== head.name),
    outputs: session.outputs,
    executionProvider: session.executionProvider,
    run: (feeds: SessionFeeds): Promise<SessionOutputs> => session.run(head.name in feeds ? feeds : { ...feeds, [head.name]: none }),
    ...(session.release === undefined ? {} : { release: session.release.bind(session) }),
    dispose: () => session.dispose(),
  };
}

/**
 * The logits of `hidden` (`[rows, hiddenSize]`), `[rows, vocab]` float32: one run of `session` (the
 * model with its head input) feeding token 0 on `lane`, a fresh cache of the kind the session takes
 * (disposed here), and the rows to the head; the run's own logits rows come first and are dropped.
 */
export async function headLogits(session: DecoderSession, io: DecoderIo, lane: KvLane, head: HeadInput, hidden: Float32Array): Promise<Float32Array> {
  const rows = hidden.length / head.hiddenSize;
  if (!Number.isInteger(rows)) throw new RangeError(`${hidden.length} hidden values are not rows of ${head.hiddenSize}`);
  try {
    const feeds = new StepInputs(io, session.inputs).feeds([0], 0, 1);
    lane.addFeeds(feeds);
    feeds[head.name] = { type: 'float32', dims: [1, rows, head.hiddenSize], data: hidden };
    const outputs = await session.run(feeds);
    try {
      const logits = outputs[io.logits];
      if (logits === undefined || logits.type !== 'float32') throw new RangeError(`the model returned no float32 ${io.logits}`);
      const vocab = logits.dims.at(-1)!;
      return logits.data.slice(logits.data.length - rows * vocab);
    } finally {
      session.release?.(Object.values(outputs));
    }
  } finally {
    lane.dispose();
  }
}
