import type { Diagnostic, DiagnosticOrigin, Severity } from '../preflight/diagnostic.js';

/**
 * What checking a model folder and its ONNX graph against config.json can find. Kept apart from the
 * preflight's `DiagnosticCode` (app/preflight owns that list); the shape is the preflight's, so the
 * UI and the CLI show both lists the same way.
 */
export type ModelDiagnosticCode =
  // the folder
  | 'model-folder-missing'
  | 'config-missing'
  | 'config-invalid'
  | 'onnx-missing'
  | 'onnx-unreadable'
  | 'onnx-external-data-missing'
  | 'tokenizer-missing'
  | 'tokenizer-invalid'
  | 'generation-config-invalid'
  | 'chat-template-invalid'
  // the graph's inputs and outputs
  | 'io-missing-input'
  | 'io-missing-output'
  | 'io-unexpected-input'
  | 'io-kv-layer-mismatch'
  | 'io-kv-dtype'
  | 'io-kv-shape'
  | 'io-kv-heads'
  | 'io-head-dim'
  | 'io-logits'
  | 'io-hybrid-state'
  | 'io-kv-bf16'
  | 'io-kv-prequantized'
  | 'io-paged-attention'
  | 'io-static-cache'
  | 'io-inputs-embeds'
  | 'io-graph-pair'
  // the layout: which config, which graph
  | 'config-mismatch'
  | 'layout-note'
  | 'layout-pipeline'
  // the run's settings against the model
  | 'execution-provider-unavailable'
  | 'prompt-too-long'
  | 'prompt-ids-invalid'
  // the host's data folder (recent models, saved runs): conveniences, reported as notices
  | 'data-folder-unwritable'
  | 'run-not-saved'
  // where a quantized cache is dequantized (in the graph or on the host)
  | 'dequantize-path'
  // every prompt row's logits computed: the graph has no num_logits_to_keep and none could be derived
  | 'logits-rows'
  // a damaged or stale cache entry (a rewritten graph) was discarded and rebuilt
  | 'cache-entry-rebuilt';

/** A preflight-style finding about a model (STYLE.md §9: what is wrong, and `fix`: what to do). */
export interface ModelDiagnostic {
  readonly code: ModelDiagnosticCode;
  readonly severity: Severity;
  readonly origin: DiagnosticOrigin;
  readonly message: string;
  readonly layers: number[];
  readonly fix?: string;
}

/** Compile-time proof that a ModelDiagnostic can go wherever a preflight Diagnostic's fields are read. */
export type DiagnosticFields = Omit<Diagnostic, 'code'>;
const _compatible: (d: ModelDiagnostic) => DiagnosticFields = (d) => d;
void _compatible;

export function modelError(code: ModelDiagnosticCode, message: string, fix?: string, layers: number[] = []): ModelDiagnostic {
  return fix === undefined
    ? { code, severity: 'error', origin: 'kvscope', message, layers }
    : { code, severity: 'error', origin: 'kvscope', message, layers, fix };
}

export function modelWarning(code: ModelDiagnosticCode, message: string, fix?: string, layers: number[] = []): ModelDiagnostic {
  return fix === undefined
    ? { code, severity: 'warning', origin: 'kvscope', message, layers }
    : { code, severity: 'warning', origin: 'kvscope', message, layers, fix };
}

export function modelInfo(code: ModelDiagnosticCode, message: string, layers: number[] = []): ModelDiagnostic {
  return { code, severity: 'info', origin: 'kvscope', message, layers };
}
