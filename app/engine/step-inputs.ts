import type { DecoderIo } from './decoder-io.js';
import type { ValueInfo } from './decoder-session.js';
import { int64Tensor, type HostTensor } from './host-tensor.js';

/**
 * The non-cache inputs of one run: `input_ids` [1, n], `attention_mask` [1, past + n] of ones,
 * `position_ids` [1, n] = past…past+n-1 (HF's cumsum(mask) - 1 without padding), and
 * `num_logits_to_keep` = the rows the step reads (1 when generating, so that a graph which supports it
 * computes only the last row; every token's row when scoring a text).
 * The mask is a view of one buffer of ones that grows by doubling, and a decode step's one-token id
 * and position arrays are reused, so decode steps allocate no typed arrays (every allocation in the
 * loop makes V8 scavenge sooner, and a scavenge while a step's present tensors are live promotes
 * them: generation-speed.md). Reuse is safe because a session keeps no reference to its feeds once
 * `run` resolves (DecoderSession's contract).
 */
export class StepInputs {
  readonly #io: DecoderIo;
  readonly #logitsToKeepDims: readonly number[];
  #onesBuffer: BigInt64Array = new BigInt64Array(0);
  readonly #oneId = new BigInt64Array(1);
  readonly #onePosition = new BigInt64Array(1);
  readonly #keepOne = BigInt64Array.of(1n);

  constructor(io: DecoderIo, inputs: readonly ValueInfo[]) {
    this.#io = io;
    const info = io.logitsToKeep === null ? undefined : inputs.find((input) => input.name === io.logitsToKeep);
    // Optimum declares it a scalar; some exporters a [1] vector.
    this.#logitsToKeepDims = info === undefined || info.shape.length === 0 ? [] : [1];
  }

  /** A fresh feeds record holding this run's token inputs (cache inputs are added by the lane). */
  feeds(tokenIds: readonly number[], pastLength: number, logitsToKeep = 1): Record<string, HostTensor> {
    const n = tokenIds.length;
    const feeds: Record<string, HostTensor> = {};
    const ids = n === 1 ? this.#oneId : new BigInt64Array(n);
    for (let i = 0; i < n; i++) ids[i] = BigInt(tokenIds[i]!);
    feeds[this.#io.inputIds] = int64Tensor([1, n], ids);
    if (this.#io.attentionMask !== null) {
      const total = pastLength + n;
      feeds[this.#io.attentionMask] = int64Tensor([1, total], this.#ones(total));
    }
    if (this.#io.positionIds !== null) {
      const positions = n === 1 ? this.#onePosition : new BigInt64Array(n);
      for (let i = 0; i < n; i++) positions[i] = BigInt(pastLength + i);
      feeds[this.#io.positionIds] = int64Tensor([1, n], positions);
    }
    if (this.#io.logitsToKeep !== null) {
      const keep = logitsToKeep === 1 ? this.#keepOne : BigInt64Array.of(BigInt(logitsToKeep));
      feeds[this.#io.logitsToKeep] = int64Tensor(this.#logitsToKeepDims, keep);
    }
    return feeds;
  }

  #ones(length: number): BigInt64Array {
    if (this.#onesBuffer.length < length) this.#onesBuffer = new BigInt64Array(Math.max(length, 2 * this.#onesBuffer.length, 64)).fill(1n);
    return this.#onesBuffer.subarray(0, length);
  }
}
