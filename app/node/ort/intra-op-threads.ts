import type { ExecutionProviderName } from '../../engine/types.js';

/**
 * Widest hidden size for which kvscope runs the CPU session on one intra-op thread. In such a graph
 * every operator is tiny (a 64-wide MatMul per token), so handing parts of it to ORT's worker costs
 * more than it saves: stories260k (hidden 64) decodes 1.2-1.4× faster on one thread than on ORT's
 * default two on the 2-core machines (separate processes, alternating), while a model like the
 * 8-layer synthetic one (hidden 512) loses 13-35% on one thread (generation-speed.md).
 */
export const SINGLE_THREAD_MAX_HIDDEN_SIZE = 128;

/** The intra-op thread count to ask for, or undefined for ORT's default (one per physical core). */
export function intraOpThreadsFor(executionProvider: ExecutionProviderName, hiddenSize: number | null): number | undefined {
  if (executionProvider !== 'cpu' || hiddenSize === null) return undefined;
  return hiddenSize <= SINGLE_THREAD_MAX_HIDDEN_SIZE ? 1 : undefined;
}
