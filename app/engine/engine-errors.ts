import { KvscopeError } from '../errors.js';
import type { Diagnostic } from '../preflight/diagnostic.js';
import type { ModelDiagnostic } from './model-diagnostic.js';

/**
 * The engine's typed errors (STYLE.md §9). Each carries `fix` (what to do) and, where a check produced
 * them, the `diagnostics`, so a host can show the same list the preflight view shows. The protocol
 * classifies errors by `name` (app/protocol/run-error.ts): keep these names stable.
 */

/**
 * One line per error diagnostic. The error's own `fix` is shown apart by every host (CLI "fix:", the
 * UI's "What to do"), so only the other diagnostics' fixes are spelled out in the message.
 */
function diagnosticLines(errors: readonly { message: string; fix?: string | undefined }[], fix: string | undefined): string {
  return errors.map((d) => `- ${d.message}${d.fix !== undefined && d.fix !== fix ? ` Fix: ${d.fix}` : ''}`).join('\n');
}

/** A model folder, graph, config or tokenizer that cannot be used as given. */
export class ModelLoadError extends KvscopeError {
  override readonly name = 'ModelLoadError';
  readonly fix: string | undefined;
  readonly diagnostics: readonly ModelDiagnostic[];

  constructor(message: string, options: { fix?: string; diagnostics?: readonly ModelDiagnostic[]; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.fix = options.fix;
    this.diagnostics = options.diagnostics ?? [];
  }

  /** Collects the error diagnostics into one readable message (the first one's fix becomes `fix`). */
  static fromDiagnostics(summary: string, diagnostics: readonly ModelDiagnostic[]): ModelLoadError {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    const fix = errors.find((d) => d.fix !== undefined)?.fix;
    return new ModelLoadError(`${summary}\n${diagnosticLines(errors, fix)}`, fix === undefined ? { diagnostics } : { fix, diagnostics });
  }
}

/**
 * A model whose files are all readable but that kvscope cannot drive as it is (a graph input it cannot
 * feed, a config that contradicts the graph): the model checks refuse it before any run, like the
 * preflight refuses settings (the CLI exits 2; run-error.ts classifies `…RefusedError` as a refusal).
 */
export class ModelRefusedError extends KvscopeError {
  override readonly name = 'ModelRefusedError';
  readonly fix: string | undefined;
  readonly diagnostics: readonly ModelDiagnostic[];

  constructor(summary: string, diagnostics: readonly ModelDiagnostic[]) {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    const fix = errors.find((d) => d.fix !== undefined)?.fix;
    super(`${summary}\n${diagnosticLines(errors, fix)}`);
    this.fix = fix;
    this.diagnostics = diagnostics;
  }
}

/** tokenizer.json / tokenizer_config.json missing or unreadable. */
export class TokenizerError extends KvscopeError {
  override readonly name = 'TokenizerError';
  readonly fix: string | undefined;

  constructor(message: string, fix?: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.fix = fix;
  }
}

/** The preflight refused the quantized-cache settings for this model (its error diagnostics, verbatim). */
export class PreflightRefusedError extends KvscopeError {
  override readonly name = 'PreflightRefusedError';
  readonly fix: string | undefined;
  readonly diagnostics: readonly Diagnostic[];

  constructor(diagnostics: readonly Diagnostic[]) {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    const fix = errors.find((d) => d.fix !== undefined)?.fix;
    super(`The quantized cache cannot run with these settings; the preflight refuses them:\n${diagnosticLines(errors, fix)}`);
    this.fix = fix;
    this.diagnostics = diagnostics;
  }
}

/** The requested execution provider is not available in this onnxruntime build or on this machine. */
export class ExecutionProviderRefusedError extends KvscopeError {
  override readonly name = 'ExecutionProviderRefusedError';
  readonly fix: string | undefined;
  readonly diagnostics: readonly ModelDiagnostic[];

  constructor(message: string, fix: string) {
    super(message);
    this.fix = fix;
    this.diagnostics = [{ code: 'execution-provider-unavailable', severity: 'error', origin: 'kvscope', message, layers: [], fix }];
  }
}

/** Something went wrong while generating (a graph that returns tensors of the wrong shape, settings out of range). */
export class GenerationError extends KvscopeError {
  override readonly name = 'GenerationError';
  readonly fix: string | undefined;

  constructor(message: string, fix?: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.fix = fix;
  }
}
