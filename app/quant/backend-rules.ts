import type { QuantBackend } from './types.js';

/** What each backend's layer class accepts (spec §1.2) and what the transformers docs recommend (spec §4.1). */
export interface BackendRules {
  readonly backend: QuantBackend;
  /** how the error messages spell the backend: `quanto` or `HQQ` */
  readonly messageName: string;
  readonly nbits: readonly number[];
  readonly axes: readonly number[];
  readonly recommendedAxis: number;
}

const RULES: Readonly<Record<QuantBackend, BackendRules>> = {
  quanto: { backend: 'quanto', messageName: 'quanto', nbits: [2, 4], axes: [0, -1], recommendedAxis: 0 },
  hqq: { backend: 'hqq', messageName: 'HQQ', nbits: [1, 2, 3, 4, 8], axes: [0, 1], recommendedAxis: 1 },
};

/** The rules for a backend string, case-sensitively as transformers matches it; null when unknown. */
export function backendRules(backend: string): BackendRules | null {
  return backend === 'quanto' || backend === 'hqq' ? RULES[backend] : null;
}
