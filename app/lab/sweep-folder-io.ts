/**
 * What the sweep does to its folder: the CLI implements it with fs (main/cli/node-sweep-io.ts), the
 * workbench backend the same way (app/node/lab/), tests in memory or on a temp folder.
 */
export interface SweepFolderIo {
  joinPath(...parts: string[]): string;
  /** a whole UTF-8 text file */
  readTextFile(path: string): string;
  /** a reader sees the old file or the complete new one, never a part */
  writeFileAtomic(path: string, bytes: Uint8Array): void;
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
