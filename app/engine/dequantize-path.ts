import { GenerationError } from './engine-errors.js';
import { DEFAULT_DEQUANTIZE_PATH, type DequantizePath } from './types.js';

/** Where a quantized cache is dequantized for one run or evaluation, and why not in the graph when the default fell back. */
export type DequantizeChoice<T> =
  | { readonly path: 'graph'; readonly opened: T }
  | { readonly path: 'host'; readonly reason: string | undefined };

/**
 * THE graph-vs-host decision, for `kvscope run` (run-generation.ts) and `kvscope eval` (run-eval.ts)
 * alike: `graph` (asked for, or the default) opens the rewritten graph (`openGraph`, which returns the
 * reason instead when the rewrite cannot express the settings or the layout: in-graph-run.ts
 * inGraphSettingsReason is the settings' half, also asked by the run check before Run); an explicit
 * `graph` is then refused with that reason, and the default runs `host` and says why.
 */
export async function chooseDequantizePath<T extends object>(
  asked: DequantizePath | undefined, openGraph: () => Promise<T | { readonly reason: string }>, action: 'run' | 'evaluate',
): Promise<DequantizeChoice<T>> {
  if ((asked ?? DEFAULT_DEQUANTIZE_PATH) === 'host') return { path: 'host', reason: undefined };
  const opened = await openGraph();
  if (!('reason' in opened)) return { path: 'graph', opened };
  if (asked === 'graph') {
    throw new GenerationError(`--dequantize graph cannot ${action} these settings: ${opened.reason}.`, action === 'run'
      ? 'Run with --dequantize host (kvscope dequantizes in JavaScript and feeds every layer\'s history), or change the settings.'
      : 'Evaluate with --dequantize host (the same logits, dequantized in JavaScript), or change the settings.');
  }
  return { path: 'host', reason: opened.reason };
}
