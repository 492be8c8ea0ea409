import type { SessionCompute } from '../engine/session-compute.js';
import type { ModelFiles } from './model/open-model.js';
import { sessionSharing } from './ort/ort-decoder-session.js';

/**
 * How this thread's sessions of `files` compute (the record's `session`): `lastRows` when the run or
 * evaluation opened the derived graph that takes num_logits_to_keep; prepacking as this thread's
 * SessionSharing sets it (off in a sweep's jobs).
 */
export function sessionCompute(files: ModelFiles, lastRows: boolean): SessionCompute {
  const support = files.analysis.logitsRows.kind;
  return { logitsRows: lastRows ? 'derived' : support === 'input' ? 'input' : 'every-row', prepacked: !sessionSharing().weightsInPlace };
}
