import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { RetrievalCommandRuntime } from '../../cli/retrieval-command.js';
import type { StartRun } from '../../protocol/run-handle.js';
import { encodePrompt, loadTokenizer } from '../model/load-tokenizer.js';
import { findModelFolder } from '../model/model-folder.js';
import { resolveModelPath } from '../run-generation.js';

/**
 * `kvscope eval --task`'s runtime on Node, for the CLI (main/cli/node-retrieval-runtime.ts) and the
 * Lab's retrieval sweeps (app/node/lab/lab-backend.ts) alike: the model's tokenizer counts, each
 * sample runs through `startRun` as `kvscope run` runs it. Only the host's interrupt differs.
 * The tokenizer and model readers are imported statically: every host of this runtime (the CLI's
 * run and lab runtimes, the Lab backend) has loaded them with the run path already.
 */
export function retrievalRuntime(options: {
  readonly kvscopeVersion: string;
  readonly startRun: StartRun;
  readonly onInterrupt: RetrievalCommandRuntime['onInterrupt'];
  readonly now?: () => Date;
}): RetrievalCommandRuntime {
  return {
    startRun: options.startRun,
    async countTokens(model, format) {
      const folder = findModelFolder(await resolveModelPath(model));
      const tokenizer = loadTokenizer(folder);
      // the run's own encoding of the prompt (app/node/model/run-prompt.ts), so the fitted length is the prefilled one;
      // a chat prompt is checked once here, so a model without a template is refused before any run
      if (format === 'chat') encodePrompt(tokenizer, '', null, format);
      return (text) => encodePrompt(tokenizer, text, null, format).length;
    },
    onInterrupt: options.onInterrupt,
    nowMs: () => performance.now(),
    sha256: (text) => createHash('sha256').update(text, 'utf8').digest('hex'),
    now: options.now ?? (() => new Date()),
    kvscopeVersion: options.kvscopeVersion,
  };
}
