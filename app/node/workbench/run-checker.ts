import { statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { ExecutionProviderName, RunSettings } from '../../engine/types.js';
import { checkRun, refusedRunCheck, type RunCheck } from '../../preflight/check-run.js';
import { readModelFiles, type ModelFiles } from '../model/open-model.js';
import { encodeRunPrompt } from '../model/run-prompt.js';

export interface RunCheckerOptions {
  /** a folder path as is; `synthetic` / `synthetic-hybrid` to where the builder put them */
  resolveModel(model: string): Promise<string>;
  /** why an execution provider cannot run here, or null when it can (the host's probe) */
  executionProviderProblem?(name: ExecutionProviderName): Promise<{ message: string; fix?: string } | null>;
}

interface CachedFiles {
  readonly stamp: string;
  readonly files: ModelFiles;
}

/** Model folders whose files stay parsed (config, tokenizer): the last few opened. */
const MAX_CACHED_MODELS = 4;

/**
 * The host half of the run panel's verdict (app/preflight/check-run.ts): the model's config and
 * tokenizer are read once and kept while their files are unchanged, so a check on every keystroke
 * costs one tokenization and one preflight (well under a millisecond on stories260k), not a
 * tokenizer load. A bad folder or prompt becomes a refusal with its fix, never an exception.
 */
export class RunChecker {
  readonly #files = new Map<string, CachedFiles>();

  constructor(private readonly options: RunCheckerOptions) {}

  async check(settings: RunSettings): Promise<RunCheck> {
    const started = performance.now();
    const check = await this.#check(settings);
    return { ...check, elapsedMs: performance.now() - started };
  }

  /** Forgets parsed files (tests; a host that wants the memory back). */
  clear(): void {
    this.#files.clear();
  }

  async #check(settings: RunSettings): Promise<RunCheck> {
    let files: ModelFiles;
    let promptTokens: number;
    try {
      files = this.#read(await this.options.resolveModel(settings.model), settings.onnxFile);
      promptTokens = encodeRunPrompt(files, settings).tokenIds.length;
    } catch (error) {
      const fix = (error as { fix?: unknown }).fix;
      return refusedRunCheck(settings.maxNewTokens, { message: (error as Error).message, ...(typeof fix === 'string' ? { fix } : {}) });
    }
    const check = checkRun(files.config, settings, promptTokens);
    const provider = await this.options.executionProviderProblem?.(settings.executionProvider) ?? null;
    if (provider === null || !check.ok) return check;
    return { ...check, ok: false, refusal: provider, fixes: [] };
  }

  #read(path: string, onnxFile: string | undefined): ModelFiles {
    const key = JSON.stringify([path, onnxFile ?? null]);
    const cached = this.#files.get(key);
    const stamp = cached === undefined ? null : stampOf(cached.files);
    if (cached !== undefined && stamp === cached.stamp) return cached.files;
    const files = readModelFiles(path, onnxFile);
    this.#files.delete(key);
    this.#files.set(key, { stamp: stampOf(files), files });
    while (this.#files.size > MAX_CACHED_MODELS) this.#files.delete(this.#files.keys().next().value!);
    return files;
  }
}

/** Size and mtime of every file the check reads: an edited config or tokenizer is read again. */
function stampOf(files: ModelFiles): string {
  const paths = [files.folder.configPath, files.folder.tokenizerPath, files.folder.tokenizerConfigPath, files.folder.chatTemplatePath, files.folder.generationConfigPath];
  return paths.map((path) => {
    if (path === null) return '-';
    const stats = statSync(path, { throwIfNoEntry: false });
    return stats === undefined ? 'gone' : `${stats.size}:${stats.mtimeMs}`;
  }).join('|');
}
