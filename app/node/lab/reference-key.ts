import { sha256Text } from '../model/file-digest.js';
import { sessionSharing } from '../ort/ort-decoder-session.js';
import type { ExecutionProviderName } from '../../engine/types.js';
import type { WindowSettings } from '../../lab/eval-settings.js';
import type { FeedMode } from '../../lab/chunk-plan.js';

/** Bumped whenever what a reference holds, or how it is computed, changes (2: window by window, sha256 per window, any window count). */
export const REFERENCE_FORMAT = 2;

export interface ReferenceKeyParts {
  /** modelContentHash: graph, external data, config, tokenizer, generation config */
  readonly modelSha256: string;
  readonly textSha256: string;
  /**
   * the windows' shape; how many are asked for (`maxWindows`) and cut is left out: window i of a text
   * is the same whatever the count (windows.ts), so one reference serves every count (reference-store.ts)
   */
  readonly windows: Pick<WindowSettings, 'context' | 'stride' | 'prefill'>;
  readonly executionProvider: ExecutionProviderName;
  /** onnxruntime's version: another build may round differently */
  readonly ortVersion: string;
  /** chunked or token by token (run-eval.ts resolveFeedMode) */
  readonly feedMode: FeedMode;
}

/** The content key of a reference: the same inputs give the same key on any machine, anything else another. */
export function referenceKey(parts: ReferenceKeyParts): string {
  const { context, stride, prefill } = parts.windows;
  return sha256Text(JSON.stringify({
    format: REFERENCE_FORMAT, model: parts.modelSha256, text: parts.textSha256,
    windows: { context, stride, prefill },
    ep: parts.executionProvider, ort: parts.ortVersion, feed: parts.feedMode,
    // A sweep's sessions read the weights unpacked, whose logits differ in their last bits (ort-decoder-session.ts SessionSharing): their own references.
    ...(sessionSharing().weightsInPlace ? { prepacked: false } : {}),
  }));
}
