import type { RunCommandRuntime } from '../../app/cli/run-command.js';
import { startRun, type StartRunOptions } from '../../app/node/worker/worker-client.js';

/** `kvscope run` on Node: the generation in a worker thread, the terminal's TTY flags, Ctrl-C and SIGTERM. */
export function nodeRunRuntime(kvscopeVersion: string, options: StartRunOptions = {}): RunCommandRuntime {
  return {
    startRun: (settings, handlers) => startRun(settings, handlers, options),
    stdoutIsTty: process.stdout.isTTY === true,
    stderrIsTty: process.stderr.isTTY === true,
    kvscopeVersion,
    now: () => new Date(),
    onInterrupt(onInterrupt) {
      // While listening, Ctrl-C and SIGTERM (a scheduler's or `kill`'s) no longer kill the process:
      // the run is cancelled and its record written as cancelled, then the command returns and the
      // process exits; the command decides what a second signal does.
      const listener = (signal: NodeJS.Signals): void => onInterrupt(signal);
      process.on('SIGINT', listener);
      process.on('SIGTERM', listener);
      return () => {
        process.off('SIGINT', listener);
        process.off('SIGTERM', listener);
      };
    },
  };
}
