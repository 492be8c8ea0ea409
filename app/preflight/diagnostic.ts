/**
 * One finding of the preflight. `code` is stable (the CLI and tests key on it); `message` starts with
 * transformers' or the backend's exact text where one exists (STYLE.md §10), then kvscope's explanation.
 */
export type Severity = 'error' | 'warning' | 'info';

/**
 * Who raises it: transformers' `QuantizedCache` constructor, the quantization library at the first
 * quantize call, or nobody (kvscope's own analysis of what would go wrong or what to know).
 */
export type DiagnosticOrigin = 'transformers' | 'backend' | 'kvscope';

export type DiagnosticCode =
  // transformers' own checks, in its order (spec §1.2)
  | 'unknown-backend'
  | 'unsupported-layer-types'
  | 'invalid-nbits'
  | 'invalid-axis-key'
  | 'invalid-axis-value'
  // the layer policy kvscope adds
  | 'layers-kept-full-precision'
  | 'no-quantizable-layers'
  // what transformers misses
  | 'layers-without-kv-cache'
  | 'invalid-group-size'
  | 'invalid-residual-length'
  | 'residual-flushes-every-second-step'
  | 'hqq-3bit-axis-1'
  | 'hqq-bitpack-group-size'
  | 'group-larger-than-tensor'
  | 'quanto-group-size-divisor'
  | 'hqq-group-size-divisor'
  | 'hqq-bitpack-rows'
  // kvscope extensions beyond transformers (app/cache/extension-problems.ts)
  | 'invalid-nbits-key'
  | 'invalid-nbits-value'
  | 'invalid-layer-map'
  | 'invalid-full-precision-layers'
  | 'invalid-sink-tokens'
  | 'invalid-rotation'
  | 'rotation-block-diagonal'
  | 'invalid-outlier-quantile'
  | 'invalid-kv-format'
  | 'kv-format-refused'
  | 'kvscope-extensions'
  // advice
  | 'axis-recommendation'
  | 'sliding-window-covers-context'
  | 'config-note'
  // the preflight's own options
  | 'invalid-batch'
  | 'invalid-sequence-length';

export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly severity: Severity;
  readonly origin: DiagnosticOrigin;
  readonly message: string;
  /** the decoder layers concerned (empty when it is not about particular layers) */
  readonly layers: number[];
  readonly fix?: string;
}

const SEVERITY_RANK: Readonly<Record<Severity, number>> = { error: 0, warning: 1, info: 2 };

/**
 * Errors first, then warnings, then info; check order within each (a stable sort). transformers
 * raises only its first error; this puts that one first in the list.
 */
export function sortBySeverity(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return [...diagnostics].sort((a, b) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity]);
}
