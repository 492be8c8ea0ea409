/**
 * What a CLI command may do to the outside world. The Node entry (main/cli) implements it with the
 * file system and the terminal; tests implement it in memory. Keeps the command logic in app/ pure.
 */
export interface CliIo {
  /**
   * Reads a whole file of the given kind (default `input`). Throws an Error whose message names the
   * path when it cannot; the Node side refuses FIFOs, devices and files past the kind's size cap
   * (app/node/files) before reading anything.
   */
  readFile(path: string, kind?: CliFileKind): Uint8Array;
  /**
   * The first `maxBytes` bytes of a file, its size and the sha256 of the whole file (streamed), with
   * the same errors as readFile. Optional: hosts without it read whole files (eval's long texts).
   */
  readFilePrefix?(path: string, maxBytes: number, kind?: CliFileKind): FilePrefix;
  /** Reads a whole UTF-8 text file, with the same errors as readFile. */
  readTextFile(path: string, kind?: CliFileKind): string;
  /** Whether the path is a directory (false when it does not exist). */
  isDirectory(path: string): boolean;
  /** Whether the path is a regular file (false when it does not exist); hosts without it accept any path. */
  isFile?(path: string): boolean;
  joinPath(...parts: string[]): string;
  /**
   * Checks, before any work, that `path` can be written as a new or replaced file: its folder exists
   * and is writable, and the path is not a folder. Throws UsageError naming `flag` when not. Optional
   * (in-memory test IOs check nothing); the Node IO asks the file system.
   */
  checkOutputPath?(path: string, flag: string): void;
  /** The same for an output folder (`sweep --out DIR`): a folder, or a path where one can be made, that this user can write. */
  checkOutputDirectory?(path: string, flag: string): void;
  /** Writes a file atomically: a reader sees the old file or the complete new one, never a part. */
  writeFileAtomic(path: string, bytes: Uint8Array): void;
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The start of a file, with the whole file's size and sha256 (CliIo.readFilePrefix). */
export interface FilePrefix {
  readonly bytes: Uint8Array;
  readonly size: number;
  readonly sha256: string;
}

/** What a command reads, which sets the size cap it is read with (app/node/files/file-kinds.ts). */
export type CliFileKind = 'config' | 'npy' | 'prompt' | 'input' | 'layer-map';

/** Exit codes of the CLI contract. */
export const ExitCode = {
  ok: 0,
  /** unreadable or invalid input: a missing file, bad JSON, a bad flag */
  badInput: 1,
  /** the input is valid but transformers (or kvscope) refuses the run */
  refused: 2,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A user mistake on the command line or in an input file; printed without a stack trace. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
