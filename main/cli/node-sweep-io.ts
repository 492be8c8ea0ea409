import type { SweepIo } from '../../app/cli/sweep-io.js';
import { nodeSweepFolderIo } from '../../app/node/lab/node-sweep-folder-io.js';
import { nodeCliIo } from './node-io.js';

/** The sweep's window on the file system: the CLI's plus folder operations. */
export function nodeSweepIo(): SweepIo {
  return { ...nodeSweepFolderIo(), ...nodeCliIo() };
}
