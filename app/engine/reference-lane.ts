import type { DecoderSession, SessionOutputs } from './decoder-session.js';
import { klDivergence, logSoftmaxInto } from './divergence.js';
import type { DecoderIo } from './decoder-io.js';
import type { KvLane } from './kv-lane.js';
import { argmax } from './sampler.js';
import type { StepInputs } from './step-inputs.js';
import { StepRunner } from './step-runner.js';
import type { ReferenceStepMetrics, ReferenceSummary } from './types.js';

/**
 * The full-precision replay (spec §1.3's DynamicCache behaviour): the same session with a
 * pass-through cache, teacher-forced with the tokens the run under test chose, so both lanes predict
 * the next token after the same context at every step. The prefill is shared: from an empty past
 * both lanes compute the very same thing (quantized layers attend to exact K/V at the prefill, §1.3).
 */
export class ReferenceLane {
  readonly #lane: KvLane;
  readonly #runner: StepRunner;
  #logP: Float64Array = new Float64Array(0);
  #logQ: Float64Array = new Float64Array(0);
  #steps = 0;
  #klSum = 0;
  #klMax = 0;
  #agreements = 0;
  #firstDivergence: number | null = null;

  /**
   * `lane`: a pass-through lane on the source graph, or, on the in-graph path, a GraphKvLane that
   * keeps every row in full precision (its residual) on the rewritten graph itself, so the run and
   * its reference share one session and one copy of the weights.
   */
  constructor(session: DecoderSession, inputs: StepInputs, io: DecoderIo, lane: KvLane, now: () => number) {
    this.#lane = lane;
    this.#runner = new StepRunner({ session, inputs, io, lane: this.#lane, now });
  }

  /** Step 0: takes the prefill's outputs as its own; identical logits by construction. */
  sharePrefill(outputs: SessionOutputs, promptLength: number, logits: Float32Array): ReferenceStepMetrics {
    this.#runner.absorbShared(outputs, promptLength);
    return this.#compare(logits, logits, 0);
  }

  /**
   * Step 0 on a session of its own (the in-graph path: the rewritten graph returns only the new rows
   * of its quantized layers, so the source graph computes the prefill whose full present the
   * reference keeps). From an empty past both graphs compute the same logits; they are compared anyway.
   */
  async prefill(promptTokenIds: readonly number[], logits: Float32Array): Promise<ReferenceStepMetrics> {
    const { logits: reference } = await this.#runner.step(promptTokenIds);
    return this.#compare(reference, logits, 0);
  }

  /** A decode step: feeds `tokenId` after the shared context and compares with the lane under test's `logits`. */
  async step(tokenId: number, logits: Float32Array, step: number): Promise<ReferenceStepMetrics> {
    const { logits: reference } = await this.#runner.step([tokenId]);
    return this.#compare(reference, logits, step);
  }

  summary(): ReferenceSummary {
    return {
      steps: this.#steps,
      meanKl: this.#steps === 0 ? 0 : this.#klSum / this.#steps,
      maxKl: this.#klMax,
      top1Agreement: this.#steps === 0 ? 1 : this.#agreements / this.#steps,
      firstDivergenceStep: this.#firstDivergence,
    };
  }

  references(buffer: ArrayBufferLike): boolean {
    return this.#lane.references(buffer);
  }

  dispose(): void {
    this.#lane.dispose();
  }

  #compare(reference: Float32Array, tested: Float32Array, step: number): ReferenceStepMetrics {
    if (this.#logP.length !== reference.length) {
      this.#logP = new Float64Array(reference.length);
      this.#logQ = new Float64Array(reference.length);
    }
    logSoftmaxInto(reference, this.#logP);
    logSoftmaxInto(tested, this.#logQ);
    const kl = klDivergence(this.#logP, this.#logQ);
    const referenceTokenId = argmax(reference);
    const top1Agrees = referenceTokenId === argmax(tested);
    this.#steps++;
    this.#klSum += kl;
    this.#klMax = Math.max(this.#klMax, kl);
    if (top1Agrees) this.#agreements++;
    else if (this.#firstDivergence === null) this.#firstDivergence = step;
    return { klDivergence: kl, top1Agrees, referenceTokenId };
  }
}
