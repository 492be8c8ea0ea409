import { readFileSync } from 'node:fs';
import type { EvalCommandRuntime } from '../../app/cli/eval-command.js';
import { LabWorker, type LabWorkerOptions } from '../../app/node/lab/lab-worker-client.js';

/** `kvscope eval` on Node: the evaluation in a lab worker thread, stdin for `--text -`, Ctrl-C. */
export function nodeEvalRuntime(kvscopeVersion: string, options: LabWorkerOptions = {}): EvalCommandRuntime {
  return {
    startEval(settings, jobOptions) {
      const worker = new LabWorker(options);
      const job = worker.evaluate(settings, { perToken: jobOptions.perToken, onProgress: jobOptions.onProgress });
      return { done: job.done, cancel: () => job.cancel(), dispose: () => worker.dispose() };
    },
    readStdin: () => readFileSync(0, 'utf8'),
    stderrIsTty: process.stderr.isTTY === true,
    kvscopeVersion,
    now: () => new Date(),
    onInterrupt(onInterrupt) {
      const listener = (): void => onInterrupt();
      process.on('SIGINT', listener);
      return () => void process.off('SIGINT', listener);
    },
  };
}
