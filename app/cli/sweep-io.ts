import type { CliIo } from './io.js';

/** What `kvscope sweep` does to a folder beyond CliIo: the Node entry implements it with fs. */
export interface SweepIo extends CliIo {
  exists(path: string): boolean;
  /** entry names (files and folders) of a folder */
  listDirectory(path: string): string[];
  /** creates a folder and its parents (no error when it exists) */
  makeDirectory(path: string): void;
  /** renames a folder; atomic on one file system */
  rename(from: string, to: string): void;
  /** removes a file or folder tree; nothing when it does not exist */
  remove(path: string): void;
  /** copies a folder tree */
  copyDirectory(from: string, to: string): void;
}
