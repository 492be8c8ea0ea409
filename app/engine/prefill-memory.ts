import { KvscopeError } from '../errors.js';
import { formatBytes } from '../cli/byte-size.js';
import type { ExecutionProviderName } from './types.js';

/**
 * The prefill runs the whole prompt through the graph in one call, as transformers' generate does
 * (a chunked prefill would quantize the cache at other boundaries). onnxruntime's CPU attention,
 * unfused (MatMul, Add, Softmax) and fused (Attention, GroupQueryAttention, MultiHeadAttention)
 * alike, materializes the scores `[batch, heads, S, S]` in float32; measured on stories260k
 * (8 heads), the peak resident memory of a prefill grows by three such tensors (2002 tokens:
 * +390 MB, 4002 tokens: +1.58 GB). A prompt whose estimate exceeds the memory the machine has free
 * would not fail cleanly: the allocations succeed (overcommit), pages fill in, and the kernel's
 * OOM killer ends the whole host process, every other run and client with it. So it is refused
 * before the graph is loaded, with how long a prompt fits.
 */
export const SCORE_TENSORS_AT_PEAK = 3;
const SCORE_BYTES = 4;
/** The share of the free memory one prefill may take: the rest is for the model, the host and other programs. */
export const PREFILL_MEMORY_SHARE = 0.75;

/**
 * What else a prefill holds beside the scores (issue 23, point 4), where the caller knows the model:
 * - the weights, once (the file's bytes: onnxruntime's prepacked copies replace the originals),
 *   plus the float32 weights a CPU session holds twice (a tied embedding: the Gather's original and
 *   the head's prepacked copy, app/model-layout/weights-held-twice.ts);
 * - the logits rows the graph computes: every prompt row, unless it takes num_logits_to_keep or the
 *   run derives a graph that does (app/model-layout/logits-rows-support.ts; then one), each in
 *   LOGITS_COPIES_AT_PEAK float32 copies (the head's MatMul output, the bias Add's, the copy handed to
 *   JavaScript);
 * - the cache: present K and V of every layer, KV_COPIES_AT_PEAK times (the graph's output and the
 *   lane's copy).
 * Measured (`npm run bench -- prefill-guard`: ru_maxrss of `kvscope run --max-new-tokens 1`, a
 * process each, less its RSS before the model was read; the scale models as user models without
 * num_logits_to_keep), estimate → measured, GiB: synthetic-qwen2.5-0.5b (vocab 151,936, tied) one
 * row 16 tokens 2.35 → 2.50, 2,048 tokens 3.10 → 3.26; every row 16 tokens 2.38 → 2.50, 1,024
 * tokens 4.30 → 4.48 (2,048: estimated 6.58 GiB, not run here); synthetic-8b-kv-128k (vocab 128,256) one row
 * 16 tokens 0.11 → 0.21, 2,048 tokens 1.47 → 1.47; every row 16 tokens 0.13 → 0.21, 2,048 tokens
 * 4.41 → 4.47 (those estimates without RUNTIME_BYTES_AT_PEAK). The rest, 0.10–0.16 GiB at every
 * size, is the process's own growth once it runs a model (onnxruntime's code and thread pools, the
 * session's state, the engine): the constant below. Without it, the 16-token runs of the 0.1 GiB
 * model grew 1.6–2× their estimate, past the share's own margin (estimate ÷ PREFILL_MEMORY_SHARE),
 * so where less than about 0.4 GiB was free a run the guard let in could be OOM-killed.
 */
export interface PrefillModelFacts {
  /** the graph's and its external data's bytes */
  readonly weightsBytes: number;
  readonly vocabSize: number;
  /** the graph computes only the last row's logits (num_logits_to_keep) */
  readonly logitsLastRowOnly: boolean;
  /** K and V of every layer for one token, in the cache's dtype */
  readonly kvBytesPerToken: number;
}
export const LOGITS_COPIES_AT_PEAK = 3;
export const KV_COPIES_AT_PEAK = 2;
/** What a process grows by to run any model besides the model's own terms (measured above: 0.10–0.16 GiB). */
export const RUNTIME_BYTES_AT_PEAK = 0.1 * 2 ** 30;

/** Bytes the prefill of `tokens` tokens holds at its peak: the scores, plus the model's part when known. */
export function prefillPeakBytes(numAttentionHeads: number, tokens: number, model?: PrefillModelFacts): number {
  const { a, b, c } = peakTerms(numAttentionHeads, model);
  return a * tokens * tokens + b * tokens + c;
}

/** The peak as a·S² + b·S + c in the prompt length S. */
function peakTerms(numAttentionHeads: number, model?: PrefillModelFacts): { a: number; b: number; c: number } {
  const a = SCORE_TENSORS_AT_PEAK * numAttentionHeads * SCORE_BYTES;
  if (model === undefined) return { a, b: 0, c: 0 };
  const logitsRow = LOGITS_COPIES_AT_PEAK * model.vocabSize * 4;
  return {
    a,
    b: KV_COPIES_AT_PEAK * model.kvBytesPerToken + (model.logitsLastRowOnly ? 0 : logitsRow),
    c: RUNTIME_BYTES_AT_PEAK + model.weightsBytes + (model.logitsLastRowOnly ? logitsRow : 0),
  };
}

/** Bytes of the prefill's attention scores at their peak for a prompt of `tokens` tokens. */
export function prefillScoreBytes(numAttentionHeads: number, tokens: number, batch = 1): number {
  return SCORE_TENSORS_AT_PEAK * batch * numAttentionHeads * tokens * tokens * SCORE_BYTES;
}

/** The longest prompt whose prefill scores fit in `availableBytes`. */
export function longestPromptFitting(numAttentionHeads: number, availableBytes: number, batch = 1): number {
  return Math.floor(Math.sqrt(availableBytes / (SCORE_TENSORS_AT_PEAK * batch * numAttentionHeads * SCORE_BYTES)));
}

/** A prompt too long for this machine's memory: said before the run, never an OOM kill. */
export class PrefillMemoryError extends KvscopeError {
  override readonly name = 'PrefillMemoryError';

  constructor(message: string, readonly fix: string) {
    super(message);
  }
}

/**
 * Throws PrefillMemoryError when the prefill of `promptTokens` tokens would need more memory than
 * `availableBytes`. Only the CPU provider keeps the scores in this machine's memory; a GPU provider's
 * device memory (and its fused kernels) is the runtime's to report.
 */
export function checkPrefillMemory(options: {
  readonly numAttentionHeads: number;
  readonly promptTokens: number;
  readonly availableBytes: number;
  readonly executionProvider: ExecutionProviderName;
  /** the weights, logits and cache besides the scores (counted when given) */
  readonly model?: PrefillModelFacts;
}): void {
  const { numAttentionHeads, promptTokens, availableBytes, executionProvider, model } = options;
  if (executionProvider !== 'cpu') return;
  const needed = prefillPeakBytes(numAttentionHeads, promptTokens, model);
  const budget = availableBytes * PREFILL_MEMORY_SHARE;
  if (needed <= budget) return;
  const { a, b, c } = peakTerms(numAttentionHeads, model);
  // the largest S with a·S² + b·S + c ≤ budget
  const fitting = c >= budget ? 0 : Math.floor((-b + Math.sqrt(b * b + 4 * a * (budget - c))) / (2 * a));
  const scores = `(${SCORE_TENSORS_AT_PEAK} × ${numAttentionHeads} heads × ${promptTokens}² × ${SCORE_BYTES} B on the CPU)`;
  const what = model === undefined ? `for the attention scores ${scores}` : `for the weights, the attention scores ${scores}, ` +
    `the logits (${model.logitsLastRowOnly ? 'the last row only' : `${promptTokens} rows × ${model.vocabSize}`}) and the cache`;
  throw new PrefillMemoryError(
    `The prompt is ${promptTokens} tokens; prefilling it at once needs about ${formatBytes(needed)} ${what}, ` +
    `more than the ${formatBytes(budget)} a run may take (${PREFILL_MEMORY_SHARE * 100}% of the ${formatBytes(availableBytes)} this machine has free). The run was not started.`,
    `Shorten the prompt to at most about ${fitting} tokens, or free memory (fewer runs at once).`,
  );
}
