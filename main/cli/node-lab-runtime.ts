import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { EvalCommandRuntime } from '../../app/cli/eval-command.js';
import type { SweepRuntime } from '../../app/cli/sweep-command.js';
import type { EvalOptionTable } from '../../app/lab/sweep-spec.js';
import { LabWorker, type LabWorkerOptions } from '../../app/node/lab/lab-worker-client.js';
import { sweepJobWorker } from '../../app/node/lab/sweep-job-worker.js';
import { readModelFiles } from '../../app/node/model/open-model.js';
import { resolveModelPath } from '../../app/node/run-generation.js';

/** `kvscope eval` on Node: the evaluation in a lab worker thread, stdin for `--text -`, Ctrl-C. */
export function nodeEvalRuntime(kvscopeVersion: string, options: LabWorkerOptions = {}): EvalCommandRuntime {
  return {
    startEval(settings, jobOptions) {
      const worker = new LabWorker(options);
      const job = worker.evaluate(settings, { perToken: jobOptions.perToken, onProgress: jobOptions.onProgress });
      return { done: job.done, cancel: () => job.cancel(), dispose: () => worker.dispose() };
    },
    readStdin: () => readFileSync(0),
    stderrIsTty: process.stderr.isTTY === true,
    kvscopeVersion,
    now: () => new Date(),
    onInterrupt(onInterrupt) {
      // SIGTERM too (a scheduler's time limit, `timeout`): cancelled like Ctrl-C, never killed mid-step
      const listener = (): void => onInterrupt();
      process.on('SIGINT', listener);
      process.on('SIGTERM', listener);
      return () => {
        process.off('SIGINT', listener);
        process.off('SIGTERM', listener);
      };
    },
  };
}

/** `kvscope sweep` on Node: a lab worker per job (a thread for one job, a process each for several), this machine's cores, the model's layer count. */
export function nodeSweepRuntime(kvscopeVersion: string, evalOptions: EvalOptionTable, options: LabWorkerOptions = {}): SweepRuntime {
  return {
    evalOptions,
    cores: availableParallelism(),
    startWorker: (jobs) => sweepJobWorker(options, jobs),
    async modelLayerCount(model) {
      const files = await readModelFiles(await resolveModelPath(model));
      return files.config.geometry.numLayers;
    },
    async modelWeights(model) {
      const files = await readModelFiles(await resolveModelPath(model));
      // the data files alone (totalBytes counts the graph file too)
      const externalBytes = files.analysis.externalData.files.reduce((sum, file) => sum + file.bytes, 0);
      return { externalBytes, embeddedBytes: files.analysis.embeddedWeightsBytes, perJobBytes: files.analysis.prefillEmbeddedWeightsBytes };
    },
    sha256: (text) => createHash('sha256').update(text).digest('hex'),
    randomSuffix: () => randomBytes(4).toString('hex'),
    stderrIsTty: process.stderr.isTTY === true,
    kvscopeVersion,
    now: () => new Date(),
    onInterrupt(onInterrupt) {
      const listener = (): void => onInterrupt();
      process.on('SIGINT', listener);
      process.on('SIGTERM', listener);
      return () => {
        process.off('SIGINT', listener);
        process.off('SIGTERM', listener);
      };
    },
  };
}
