import type { DecoderIo, IndexType } from './decoder-io.js';
import type { ValueInfo } from './decoder-session.js';
import { boolTensor, int32Tensor, int64Tensor, type HostTensor } from './host-tensor.js';

/** ids, mask and positions in the integer type the graph declares (int64: Optimum; int32: onnxruntime.transformers). */
type IndexArray = BigInt64Array | Int32Array;

/**
 * The non-cache inputs of one run: `input_ids` [1, n], `attention_mask` [1, past + n] of ones,
 * `position_ids` [1, n] = past…past+n-1 (HF's cumsum(mask) - 1 without padding), and
 * `num_logits_to_keep` = the rows the step reads (1 when generating, so that a graph which supports it
 * computes only the last row; every token's row when scoring a text), and a merged
 * decoder's `use_cache_branch` = false at the prefill (its past is empty), true after (Optimum's
 * ORTModelForCausalLM). Ids, mask and positions take the integer type the graph declares.
 * A prompt left-padded with `paddingTokens` pads (RunSettings.padPromptTo) gets zeros over the
 * pads in the mask and HF's position ids, `cumsum(mask) - 1` with padded positions set to 1
 * (`prepare_inputs_for_generation`), so the real tokens sit at positions 0, 1, … as unpadded.
 * The mask is a view of one buffer of ones that grows by doubling, and a decode step's one-token id
 * and position arrays are reused, so decode steps allocate no typed arrays (every allocation in the
 * loop makes V8 scavenge sooner, and a scavenge while a step's present tensors are live promotes
 * them: generation-speed.md). Reuse is safe because a session keeps no reference to its feeds once
 * `run` resolves (DecoderSession's contract).
 */
export class StepInputs {
  readonly #io: DecoderIo;
  readonly #logitsToKeepDims: readonly number[];
  #onesBuffer: IndexArray;
  readonly #oneId: IndexArray;
  readonly #onePosition: IndexArray;
  readonly #keepOne = BigInt64Array.of(1n);
  readonly #padding: number;
  readonly #noCacheBranch = Uint8Array.of(0);
  readonly #cacheBranch = Uint8Array.of(1);

  constructor(io: DecoderIo, inputs: readonly ValueInfo[], paddingTokens = 0) {
    this.#io = io;
    this.#padding = paddingTokens;
    const info = io.logitsToKeep === null ? undefined : inputs.find((input) => input.name === io.logitsToKeep);
    // Optimum declares it a scalar; some exporters a [1] vector.
    this.#logitsToKeepDims = info === undefined || info.shape.length === 0 ? [] : [1];
    this.#onesBuffer = indexArray(io.attentionMaskType, 0);
    this.#oneId = indexArray(io.inputIdsType, 1);
    this.#onePosition = indexArray(io.positionIdsType, 1);
  }

  /** A fresh feeds record holding this run's token inputs (cache inputs are added by the lane). */
  feeds(tokenIds: readonly number[], pastLength: number, logitsToKeep = 1): Record<string, HostTensor> {
    const n = tokenIds.length;
    const feeds: Record<string, HostTensor> = {};
    const ids = n === 1 ? this.#oneId : indexArray(this.#io.inputIdsType, n);
    for (let i = 0; i < n; i++) setIndex(ids, i, tokenIds[i]!);
    feeds[this.#io.inputIds] = indexTensor([1, n], ids);
    if (this.#io.attentionMask !== null) {
      const total = pastLength + n;
      feeds[this.#io.attentionMask] = indexTensor([1, total], this.#ones(total));
    }
    if (this.#io.positionIds !== null) {
      const positions = n === 1 ? this.#onePosition : indexArray(this.#io.positionIdsType, n);
      for (let i = 0; i < n; i++) {
        const index = pastLength + i;
        setIndex(positions, i, index < this.#padding ? 1 : index - this.#padding);
      }
      feeds[this.#io.positionIds] = indexTensor([1, n], positions);
    }
    if (this.#io.logitsToKeep !== null) {
      const keep = logitsToKeep === 1 ? this.#keepOne : BigInt64Array.of(BigInt(logitsToKeep));
      feeds[this.#io.logitsToKeep] = int64Tensor(this.#logitsToKeepDims, keep);
    }
    if (this.#io.useCacheBranch !== null) feeds[this.#io.useCacheBranch] = boolTensor([1], pastLength > 0 ? this.#cacheBranch : this.#noCacheBranch);
    return feeds;
  }

  #ones(length: number): IndexArray {
    if (this.#onesBuffer.length < length) {
      const ones = indexArray(this.#io.attentionMaskType, Math.max(length, 2 * this.#onesBuffer.length, 64));
      // left padding: the pads' mask is 0 (RunSettings.padPromptTo)
      for (let i = 0; i < ones.length; i++) setIndex(ones, i, i < this.#padding ? 0 : 1);
      this.#onesBuffer = ones;
    }
    return this.#onesBuffer.subarray(0, length);
  }
}

function indexArray(type: IndexType, length: number): IndexArray {
  return type === 'int32' ? new Int32Array(length) : new BigInt64Array(length);
}

function setIndex(array: IndexArray, index: number, value: number): void {
  if (array instanceof BigInt64Array) array[index] = BigInt(value);
  else array[index] = value;
}

function indexTensor(dims: readonly number[], data: IndexArray): HostTensor {
  return data instanceof BigInt64Array ? int64Tensor(dims, data) : int32Tensor(dims, data);
}
