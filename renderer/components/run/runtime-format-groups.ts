import { RUNTIME_FORMATS } from '../../../app/quant/runtime-formats/registry.js';
import type { RuntimeFormat } from '../../../app/quant/runtime-formats/types.js';

/** The runtime KV formats (issue 27, a kvscope extension) grouped by the runtime that stores KV that way, for `<optgroup>`s. */
export const RUNTIME_GROUPS: readonly (readonly [string, readonly RuntimeFormat[]])[] = [...new Set(RUNTIME_FORMATS.map((f) => f.runtime))]
  .map((runtime) => [runtime, RUNTIME_FORMATS.filter((f) => f.runtime === runtime)] as const);
