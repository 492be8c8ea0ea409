import type { RunCommandRuntime } from '../../app/cli/run-command.js';
import { startRun, type StartRunOptions } from '../../app/node/worker/worker-client.js';

/** `kvscope run` on Node: the generation in a worker thread, the terminal's TTY flags, Ctrl-C. */
export function nodeRunRuntime(kvscopeVersion: string, options: StartRunOptions = {}): RunCommandRuntime {
  return {
    startRun: (settings, handlers) => startRun(settings, handlers, options),
    stdoutIsTty: process.stdout.isTTY === true,
    stderrIsTty: process.stderr.isTTY === true,
    kvscopeVersion,
    now: () => new Date(),
    onInterrupt(onInterrupt) {
      // While listening, Ctrl-C no longer kills the process: the run is cancelled instead, and the
      // command decides what a second Ctrl-C does.
      const listener = (): void => onInterrupt();
      process.on('SIGINT', listener);
      return () => void process.off('SIGINT', listener);
    },
  };
}
