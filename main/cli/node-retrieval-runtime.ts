import type { RetrievalCommandRuntime } from '../../app/cli/retrieval-command.js';
import { retrievalRuntime } from '../../app/node/retrieval/retrieval-runtime.js';
import type { StartRunOptions } from '../../app/node/worker/worker-client.js';
import { nodeRunRuntime } from './node-run-runtime.js';

/** `kvscope eval --task` on Node: the model's tokenizer counts, each sample runs as `kvscope run` runs (a worker thread), Ctrl-C cancels. */
export function nodeRetrievalRuntime(kvscopeVersion: string, options: StartRunOptions = {}): RetrievalCommandRuntime {
  const run = nodeRunRuntime(kvscopeVersion, options);
  return retrievalRuntime({ kvscopeVersion, startRun: run.startRun, onInterrupt: (onInterrupt) => run.onInterrupt(() => onInterrupt()) });
}
