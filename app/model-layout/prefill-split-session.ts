import type { DecoderSession, SessionFeeds, SessionOutputs, ValueInfo } from '../engine/decoder-session.js';
import type { HostTensor } from '../engine/host-tensor.js';
import type { ExecutionProviderName } from '../engine/types.js';

/**
 * The legacy Optimum pair as one DecoderSession: `decoder_model.onnx` (no past inputs) runs the
 * prefill, `decoder_with_past_model.onnx` every later step, as Optimum's ORTModelForCausalLM did
 * before merged decoders. The engine sees the with-past signature and feeds an empty past at the
 * prefill; this session recognizes it by that empty past and hands the prefill graph only the inputs
 * it declares. Both graphs return the same `present.*`, so the lanes never know there are two.
 */
export class PrefillSplitSession implements DecoderSession {
  readonly #prefill: DecoderSession;
  readonly #decode: DecoderSession;
  readonly #pastInput: string;
  readonly #prefillInputs: ReadonlySet<string>;

  /** `pastInput`: one of the with-past graph's KV inputs, empty exactly at the prefill */
  constructor(prefill: DecoderSession, decode: DecoderSession, pastInput: string) {
    this.#prefill = prefill;
    this.#decode = decode;
    this.#pastInput = pastInput;
    this.#prefillInputs = new Set(prefill.inputs.map((input) => input.name));
  }

  get inputs(): readonly ValueInfo[] {
    return this.#decode.inputs;
  }

  get outputs(): readonly ValueInfo[] {
    return this.#decode.outputs;
  }

  get executionProvider(): ExecutionProviderName {
    return this.#decode.executionProvider;
  }

  run(feeds: SessionFeeds): Promise<SessionOutputs> {
    const past = feeds[this.#pastInput];
    if (past !== undefined && past.data.length > 0) return this.#decode.run(feeds);
    const prefillFeeds: Record<string, HostTensor> = {};
    for (const name in feeds) if (this.#prefillInputs.has(name)) prefillFeeds[name] = feeds[name]!;
    return this.#prefill.run(prefillFeeds);
  }

  /** Each session frees only the outputs it returned (DecoderSession's contract), so both are asked. */
  release(outputs: readonly HostTensor[]): void {
    this.#prefill.release?.(outputs);
    this.#decode.release?.(outputs);
  }

  async dispose(): Promise<void> {
    await Promise.all([this.#prefill.dispose(), this.#decode.dispose()]);
  }
}
