import { EXTENSION_OPTION_SPECS } from './extension-options.js';

/** A command's options in the shape of `util.parseArgs` option specs (main/cli parses argv with them). */
export type OptionSpecTable = Readonly<Record<string, { readonly type: 'string' | 'boolean' }>>;

/** The quantized-cache settings, spelled the same by `preflight`, `run`, `eval` and a sweep's keys. */
export const CACHE_OPTION_SPECS = {
  backend: { type: 'string' },
  nbits: { type: 'string' },
  'axis-key': { type: 'string' },
  'axis-value': { type: 'string' },
  'group-size': { type: 'string' },
  'residual-length': { type: 'string' },
  'layer-policy': { type: 'string' },
  // kvscope extensions beyond transformers (app/cli/extension-options.ts)
  ...EXTENSION_OPTION_SPECS,
} as const satisfies OptionSpecTable;

/**
 * `eval`'s options: the model, EP and cache options of `run` (CACHE_OPTION_SPECS, so a cache option
 * added there is an eval option, and a sweep key, at once), the text and its windows, the lab's
 * targets. `kvscope sweep` and the Lab view take their keys from this table, never from a list of their own.
 */
export const EVAL_OPTION_SPECS = {
  model: { type: 'string' },
  onnx: { type: 'string' },
  ep: { type: 'string' },
  cache: { type: 'string' },
  ...CACHE_OPTION_SPECS,
  text: { type: 'string' },
  'text-ids': { type: 'string' },
  context: { type: 'string' },
  stride: { type: 'string' },
  prefill: { type: 'string' },
  windows: { type: 'string' },
  feed: { type: 'string' },
  dequantize: { type: 'string' },
  'quantize-layers': { type: 'string' },
  'quantize-parts': { type: 'string' },
  'per-token': { type: 'boolean' },
  out: { type: 'string' },
  json: { type: 'boolean' },
} as const satisfies OptionSpecTable;
