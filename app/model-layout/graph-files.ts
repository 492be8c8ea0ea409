/**
 * What a graph file's name says about it, in the layouts researchers bring:
 * - Optimum / Hugging Face: `onnx/model.onnx`; legacy Optimum decoders `decoder_model.onnx` (no past),
 *   `decoder_with_past_model.onnx` and `decoder_model_merged.onnx` (both in one graph, `use_cache_branch`);
 * - transformers.js variants: the same names with a dtype suffix (`model_q4f16.onnx`,
 *   `decoder_model_merged_quantized.onnx`), transformers.js' DEFAULT_DTYPE_SUFFIX_MAPPING;
 * - anything else (`decoder.onnx`, `past.onnx`, a model builder's `model.onnx` at the root).
 * The name says what the file is meant to be; the graph's tensor types say what it is (graph-precision.ts).
 */
export type GraphRole = 'model' | 'decoder' | 'decoder-with-past' | 'decoder-merged' | 'other';

export interface GraphFileName {
  /** relative to the model folder, `/`-separated */
  readonly file: string;
  /** the file name without `.onnx` */
  readonly stem: string;
  /** the stem without its transformers.js suffix */
  readonly base: string;
  /** the transformers.js dtype its suffix names (`q4f16`, `fp16`, `q8` for `_quantized`), or null */
  readonly dtype: string | null;
  readonly role: GraphRole;
}

/** transformers.js dtype → file suffix, longest suffixes first so `_q4f16` is not read as `_fp16`'s cousin. */
export const TRANSFORMERS_JS_SUFFIXES: readonly (readonly [dtype: string, suffix: string])[] = [
  ['q4f16', '_q4f16'], ['q2f16', '_q2f16'], ['q1f16', '_q1f16'], ['fp16', '_fp16'], ['uint8', '_uint8'], ['int8', '_int8'],
  ['q8', '_quantized'], ['bnb4', '_bnb4'], ['q4', '_q4'], ['q2', '_q2'], ['q1', '_q1'],
];

const ROLES: readonly (readonly [base: string, role: GraphRole])[] = [
  ['model', 'model'], ['decoder_model', 'decoder'], ['decoder_with_past_model', 'decoder-with-past'], ['decoder_model_merged', 'decoder-merged'],
];

export function parseGraphFileName(file: string): GraphFileName {
  const name = file.slice(file.lastIndexOf('/') + 1);
  const stem = name.endsWith('.onnx') ? name.slice(0, -'.onnx'.length) : name;
  for (const [dtype, suffix] of [...TRANSFORMERS_JS_SUFFIXES, ['fp32', ''] as const]) {
    if (!stem.endsWith(suffix)) continue;
    const base = stem.slice(0, stem.length - suffix.length);
    const role = ROLES.find(([roleBase]) => roleBase === base)?.[1];
    if (role !== undefined) return { file, stem, base, dtype: suffix === '' ? null : dtype, role };
  }
  return { file, stem, base: stem, dtype: null, role: 'other' };
}

/** The file of `dtype`'s variant of `base` in `dir` (`onnx`, `model`, `q4` → `onnx/model_q4.onnx`). */
export function variantFile(dir: string, base: string, dtype: string | null): string {
  const suffix = dtype === null || dtype === 'fp32' ? '' : TRANSFORMERS_JS_SUFFIXES.find(([name]) => name === dtype)?.[1] ?? `_${dtype}`;
  return `${dir === '' ? '' : `${dir}/`}${base}${suffix}.onnx`;
}

export function directoryOf(file: string): string {
  const cut = file.lastIndexOf('/');
  return cut < 0 ? '' : file.slice(0, cut);
}
