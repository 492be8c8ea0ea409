import { performance } from 'node:perf_hooks';
import type { ExecutionProviderName, RunSettings } from '../../engine/types.js';
import { checkRun, refusedRunCheck, type RunCheck } from '../../preflight/check-run.js';
import { ModelFilesCache } from '../model/model-files-cache.js';
import type { ModelFiles } from '../model/open-model.js';
import { encodeRunPrompt } from '../model/run-prompt.js';
import { probePromptLength, runPromptLimit } from '../model/prompt-probe.js';

export interface RunCheckerOptions {
  /** a folder path as is; `synthetic` / `synthetic-hybrid` to where the builder put them */
  resolveModel(model: string): Promise<string>;
  /** why an execution provider cannot run here, or null when it can (the host's probe) */
  executionProviderProblem?(name: ExecutionProviderName): Promise<{ message: string; fix?: string } | null>;
}

/**
 * The host half of the run panel's verdict (app/preflight/check-run.ts): the model's config and
 * tokenizer are read once and kept while their files are unchanged, so a check on every keystroke
 * costs one tokenization and one preflight (well under a millisecond on stories260k), not a
 * tokenizer load. A bad folder or prompt becomes a refusal with its fix, never an exception.
 */
export class RunChecker {
  readonly #files = new ModelFilesCache();

  constructor(private readonly options: RunCheckerOptions) {}

  async check(settings: RunSettings): Promise<RunCheck> {
    const started = performance.now();
    const check = await this.#check(settings);
    return { ...check, elapsedMs: performance.now() - started };
  }

  /**
   * Reads a model's files ahead of its first check (the host calls it when the model opens), so the
   * first keystroke is checked as fast as the next ones. Failures are left for the check to report.
   */
  async prefetch(model: string, onnxFile?: string): Promise<void> {
    try {
      await this.#files.read(await this.options.resolveModel(model), onnxFile);
    } catch {
      // the check says what is wrong with the folder, when it is asked
    }
  }

  /** Forgets parsed files (tests; a host that wants the memory back). */
  clear(): void {
    this.#files.clear();
  }

  async #check(settings: RunSettings): Promise<RunCheck> {
    let files: ModelFiles;
    let promptTokens: number;
    try {
      files = await this.#files.read(await this.options.resolveModel(settings.model), settings.onnxFile);
      // A pasted 10 MB prompt is judged from a prefix, as the run would judge it, not encoded at every keystroke.
      if (settings.promptTokenIds === undefined && files.tokenizer !== null) probePromptLength(files.tokenizer, settings.prompt, runPromptLimit(files.config.geometry, settings));
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
}
