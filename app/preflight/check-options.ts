import type { Diagnostic } from './diagnostic.js';
import { isPositiveInteger } from './check-cache-arguments.js';

export interface PreflightOptions {
  /** prompt lengths (tokens) to check the quantizers' shape constraints against */
  readonly sequenceLengths?: readonly number[];
  /** batch size B of the KV tensors `[B, H, S, D]`; 1 by default */
  readonly batch?: number;
}

export interface CheckedOptions {
  readonly batch: number;
  /** the valid prompt lengths, sorted and unique; null when none were given */
  readonly sequenceLengths: readonly number[] | null;
  readonly diagnostics: Diagnostic[];
}

/** The preflight's own inputs; bad values become diagnostics rather than exceptions. */
export function checkOptions(options: PreflightOptions): CheckedOptions {
  const diagnostics: Diagnostic[] = [];
  let batch = 1;
  if (options.batch !== undefined) {
    if (isPositiveInteger(options.batch)) batch = options.batch;
    else diagnostics.push({ code: 'invalid-batch', severity: 'error', origin: 'kvscope', message: `batch must be a positive integer, got ${options.batch}.`, layers: [], fix: 'Use batch 1.' });
  }
  if (options.sequenceLengths === undefined) return { batch, sequenceLengths: null, diagnostics };
  const invalid = options.sequenceLengths.filter((length) => !isPositiveInteger(length));
  if (invalid.length > 0) {
    diagnostics.push({
      code: 'invalid-sequence-length',
      severity: 'error',
      origin: 'kvscope',
      message: `prompt lengths must be positive integers; got ${invalid.join(', ')}.`,
      layers: [],
      fix: 'Give prompt lengths in tokens, at least 1.',
    });
  }
  const valid = [...new Set(options.sequenceLengths.filter(isPositiveInteger))].sort((a, b) => a - b);
  return { batch, sequenceLengths: valid, diagnostics };
}
