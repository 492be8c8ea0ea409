import { sha256Text } from '../model/file-digest.js';
import type { ExecutionProviderName } from '../../engine/types.js';
import type { WindowSettings } from '../../lab/eval-settings.js';
import type { FeedMode } from '../../lab/chunk-plan.js';

/** Bumped whenever what a reference file holds, or how it is computed, changes. */
export const REFERENCE_FORMAT = 1;

export interface ReferenceKeyParts {
  /** modelContentHash: graph, external data, config, tokenizer, generation config */
  readonly modelSha256: string;
  readonly textSha256: string;
  readonly windows: WindowSettings;
  /** windows actually cut (a text's length decides it) */
  readonly windowCount: number;
  readonly executionProvider: ExecutionProviderName;
  /** onnxruntime's version: another build may round differently */
  readonly ortVersion: string;
  /** chunked or token by token (run-eval.ts resolveFeedMode) */
  readonly feedMode: FeedMode;
}

/** The content key of a reference: the same inputs give the same key on any machine, anything else another. */
export function referenceKey(parts: ReferenceKeyParts): string {
  const { context, stride, prefill, maxWindows } = parts.windows;
  return sha256Text(JSON.stringify({
    format: REFERENCE_FORMAT, model: parts.modelSha256, text: parts.textSha256,
    windows: { context, stride, prefill, maxWindows, count: parts.windowCount },
    ep: parts.executionProvider, ort: parts.ortVersion, feed: parts.feedMode,
  }));
}
