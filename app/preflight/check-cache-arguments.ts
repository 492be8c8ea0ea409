import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { Diagnostic } from './diagnostic.js';

/**
 * `q_group_size` and `residual_length`, which transformers does not validate (spec §1.2): a bad group
 * size fails inside the backend at the first quantize call, and residual lengths below 2 quietly
 * behave like 2 (spec §1.3 consequence 2).
 */
export function checkCacheArguments(settings: QuantizedCacheSettings, layers: number[]): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const { groupSize, residualLength } = settings;
  if (!isPositiveInteger(groupSize)) {
    diagnostics.push({
      code: 'invalid-group-size',
      severity: 'error',
      origin: 'kvscope',
      message: `q_group_size must be a positive integer, got ${groupSize}. transformers does not check it; the backend fails at the first quantize call.`,
      layers,
      fix: 'Use q_group_size 64 (the default), 32 or 128.',
    });
  }
  if (!Number.isInteger(residualLength)) {
    diagnostics.push({
      code: 'invalid-residual-length',
      severity: 'error',
      origin: 'kvscope',
      message: `residual_length must be a whole number of tokens, got ${residualLength}. transformers does not check it.`,
      layers,
      fix: 'Use residual_length 128 (the default) or another whole number of tokens.',
    });
  } else if (residualLength < 2) {
    diagnostics.push({
      code: 'residual-flushes-every-second-step',
      severity: 'warning',
      origin: 'kvscope',
      // spec §1.3, consequence 2
      message:
        `residual_length ${residualLength}: transformers accepts it, but a flush needs the residual to exist (it is a 1-D empty ` +
        'tensor after the prefill and after every flush), so residual lengths 0, 1 and 2 all flush every 2nd decode step. ' +
        'A residual length of 0 does not mean "no residual".',
      layers,
      fix: 'Use residual_length 2 to say what happens, or a larger value (128 is the default).',
    });
  }
  return diagnostics;
}

export function isPositiveInteger(value: number): boolean {
  return Number.isInteger(value) && value > 0;
}

/** The flush period with single-token decoding: every max(R, 2) steps (spec §1.3); null when R is invalid. */
export function flushPeriod(residualLength: number): number | null {
  return Number.isInteger(residualLength) ? Math.max(residualLength, 2) : null;
}
