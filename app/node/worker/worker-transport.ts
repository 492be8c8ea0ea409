import type { WorkerEntry, WorkerLaunchOptions } from './worker-launch.js';

/** How a worker ended: its exit code, or the signal that killed its process (a thread has none). */
export interface WorkerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * What a worker reports to its supervisor (worker-supervisor.ts), whichever its kind. A transport
 * calls these asynchronously, never from inside `launch` itself, and `exit` last and once.
 */
export interface WorkerEvents {
  message(raw: unknown): void;
  /** an uncaught error inside a thread, or a process that could not be started */
  error(error: Error): void;
  /** a message that arrived but could not be deserialized */
  messageError(error: Error): void;
  exit(exit: WorkerExit): void;
}

/**
 * A worker as the supervisor drives it: a thread of this process (worker-launch.ts) or a process of
 * its own (process-launch.ts; Electron's utilityProcess in main/electron/utility-process-launch.ts).
 * The supervisor's protocol checks, cancel deadline and crash handling are the same for both.
 */
export interface WorkerTransport {
  readonly kind: 'thread' | 'process';
  /** the process id of a process worker (undefined for a thread, or before the process spawned) */
  readonly pid: number | undefined;
  postMessage(message: unknown): void;
  /** stops the worker now (for a process, SIGKILL: its own handlers ignore the terminal's signals); `exit` follows */
  terminate(): void;
}

/** Starts a worker of `entry`, reporting to `events`. */
export type WorkerLauncher = (entry: WorkerEntry, options: WorkerLaunchOptions, events: WorkerEvents) => WorkerTransport;
