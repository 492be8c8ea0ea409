/**
 * The shape every long-context retrieval task shares (docs/retrieval.md). The core never tokenizes:
 * the caller injects `countTokens` (the model's tokenizer in a run, a whitespace count in tests), so
 * the generators stay pure and the same seed gives the same prompt for any tokenizer that gives the
 * same counts.
 */

/** How many tokens `text` is under the caller's tokenizer (special tokens included or not, as the run encodes). */
export type CountTokens = (text: string) => number;

export interface RetrievalRequest {
  /** 32-bit seed: every random draw of the sample comes from it */
  readonly seed: number;
  /** the prompt may hold at most this many tokens; filler is added until one more unit would pass it */
  readonly targetTokens: number;
  /**
   * RULER's max_seq_length, the prompt plus the tokens to generate, where a task's shape depends on it
   * (cwe's repeats below and from 4,096, fwe's vocabulary of max_seq_length / 50); default targetTokens
   */
  readonly sequenceTokens?: number;
  /** where the needle sits in the filler, 0 (start) to 100 (end); ignored by tasks without a needle */
  readonly depthPercent: number;
  readonly countTokens: CountTokens;
}

/** One inserted fact, where it landed. */
export interface NeedlePlacement {
  readonly text: string;
  /** UTF-16 offset of the needle in the prompt */
  readonly offset: number;
  /** whether the question asks for it (a multi-key distractor is not queried) */
  readonly queried: boolean;
  /** the needle placed at the requested depth (the others sit at seeded random depths) */
  readonly atDepth: boolean;
}

export interface RetrievalSample {
  readonly task: RetrievalTaskName;
  readonly seed: number;
  readonly prompt: string;
  /** RULER's `outputs`: every reference the prediction should contain */
  readonly answers: readonly string[];
  readonly needles: readonly NeedlePlacement[];
  /** the depth asked for, or null for tasks without a needle (cwe, fwe) */
  readonly depthPercent: number | null;
  /** `countTokens(prompt)`, at most `targetTokens` */
  readonly promptTokens: number;
  /** how much filler the fit chose, in the task's own unit (characters, haystack lines, words) */
  readonly fillerUnits: number;
}

export const RETRIEVAL_TASK_NAMES = [
  'passkey', 'niah-single', 'niah-multikey', 'niah-multivalue', 'variable-tracking', 'cwe', 'fwe',
] as const;
export type RetrievalTaskName = (typeof RETRIEVAL_TASK_NAMES)[number];

/** A bad request or a length the task cannot reach; the message says what to change. */
export class RetrievalTaskError extends Error {
  override readonly name = 'RetrievalTaskError';
  /** for a target below the bare prompt: the least target that fits it */
  constructor(message: string, readonly leastTargetTokens?: number) {
    super(message);
  }
}

/** Checks a request before any work, so no sample is built from a nonsense length or depth. */
export function checkRequest(request: RetrievalRequest): void {
  if (!Number.isInteger(request.targetTokens) || request.targetTokens < 1) {
    throw new RetrievalTaskError(`target length ${request.targetTokens} is not a positive whole number of tokens; give a length such as 1024`);
  }
  if (!Number.isFinite(request.depthPercent) || request.depthPercent < 0 || request.depthPercent > 100) {
    throw new RetrievalTaskError(`depth ${request.depthPercent} % is outside 0–100; give where the needle sits as a percentage of the filler`);
  }
  if (request.sequenceTokens !== undefined && !(Number.isInteger(request.sequenceTokens) && request.sequenceTokens >= request.targetTokens)) {
    throw new RetrievalTaskError(`sequence length ${request.sequenceTokens} is not a whole number of tokens at least the prompt's target ${request.targetTokens}`);
  }
  if (!Number.isInteger(request.seed) || request.seed < 0 || request.seed > 0xffffffff) {
    throw new RetrievalTaskError(`seed ${request.seed} is not a whole number in 0–4294967295`);
  }
}
