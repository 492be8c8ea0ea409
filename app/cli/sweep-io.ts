import type { SweepFolderIo } from '../lab/sweep-folder-io.js';
import type { CliIo } from './io.js';

/** What `kvscope sweep` does to the outside world: the CLI's io and the sweep folder's operations. */
export type SweepIo = CliIo & SweepFolderIo;
