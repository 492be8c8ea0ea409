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
}): void {
  const { numAttentionHeads, promptTokens, availableBytes, executionProvider } = options;
  if (executionProvider !== 'cpu') return;
  const needed = prefillScoreBytes(numAttentionHeads, promptTokens);
  const budget = availableBytes * PREFILL_MEMORY_SHARE;
  if (needed <= budget) return;
  const fitting = longestPromptFitting(numAttentionHeads, budget);
  throw new PrefillMemoryError(
    `The prompt is ${promptTokens} tokens; prefilling it at once needs about ${formatBytes(needed)} for the attention scores ` +
    `(${SCORE_TENSORS_AT_PEAK} × ${numAttentionHeads} heads × ${promptTokens}² × ${SCORE_BYTES} B on the CPU), ` +
    `more than the ${formatBytes(budget)} a run may take (${PREFILL_MEMORY_SHARE * 100}% of the ${formatBytes(availableBytes)} this machine has free). The run was not started.`,
    `Shorten the prompt to at most about ${fitting} tokens, or free memory (fewer runs at once).`,
  );
}
