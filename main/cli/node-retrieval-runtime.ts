import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { RetrievalCommandRuntime } from '../../app/cli/retrieval-command.js';
import type { StartRunOptions } from '../../app/node/worker/worker-client.js';
import { nodeRunRuntime } from './node-run-runtime.js';

/** `kvscope eval --task` on Node: the model's tokenizer counts, each sample runs as `kvscope run` runs (a worker thread). */
export function nodeRetrievalRuntime(kvscopeVersion: string, options: StartRunOptions = {}): RetrievalCommandRuntime {
  const run = nodeRunRuntime(kvscopeVersion, options);
  return {
    startRun: run.startRun,
    async countTokens(model, format) {
      // Imported on demand, as the run path loads them: most commands never tokenize here.
      const { resolveModelPath } = await import('../../app/node/run-generation.js');
      const { findModelFolder } = await import('../../app/node/model/model-folder.js');
      const { encodePrompt, loadTokenizer } = await import('../../app/node/model/load-tokenizer.js');
      const folder = findModelFolder(await resolveModelPath(model));
      const tokenizer = loadTokenizer(folder);
      // the run's own encoding of the prompt (app/node/model/run-prompt.ts), so the fitted length is the prefilled one;
      // a chat prompt is checked once here, so a model without a template is refused before any run
      if (format === 'chat') encodePrompt(tokenizer, '', null, format);
      return (text) => encodePrompt(tokenizer, text, null, format).length;
    },
    onInterrupt: (onInterrupt) => run.onInterrupt(() => onInterrupt()),
    nowMs: () => performance.now(),
    sha256: (text) => createHash('sha256').update(text, 'utf8').digest('hex'),
    now: () => new Date(),
    kvscopeVersion,
  };
}
