import type { ValueInfo } from './decoder-session.js';
import type { IoNaming } from './io-naming.js';
import { modelError, type ModelDiagnostic } from './model-diagnostic.js';
import { layerOf } from './name-pattern.js';

/**
 * Graph inputs kvscope refuses to feed, each named for what it is, so the preflight says "this export
 * keeps a pre-quantized KV cache" rather than "unknown input". kvscope's cache is transformers'
 * (DynamicCache, QuantizedCache): full-precision keys and values that grow by concatenation, fed as
 * `past_*` and read back from `present_*` every step. These exports keep another kind of cache:
 * - pre-quantized KV: the graph stores its own codes (uint8/int8/fp8 KV, scale/zero-point inputs);
 *   quantizing them again would measure nothing transformers does;
 * - paged attention: a block table maps tokens into a preallocated pool (vLLM-style serving exports);
 * - static caches written in place at `write_indices` / `cache_position` (fixed-size buffers);
 * - decoders that take only `inputs_embeds` (multimodal text decoders: the embeddings come from another graph).
 */
export function refusedInputs(inputs: readonly ValueInfo[], naming: IoNaming, graphName: string): { names: Set<string>; diagnostics: ModelDiagnostic[] } {
  const names = new Set<string>();
  const diagnostics: ModelDiagnostic[] = [];
  const has = (name: string): boolean => inputs.some((info) => info.name === name);
  const quote = (infos: readonly ValueInfo[]): string => infos.map((info) => `\`${info.name}\` (${info.type} [${info.shape.join(', ')}])`).join(', ');
  const refuse = (infos: readonly ValueInfo[]): void => {
    for (const info of infos) names.add(info.name);
  };

  if (has(naming.inputsEmbeds)) {
    const embeds = inputs.filter((info) => info.name === naming.inputsEmbeds);
    refuse(embeds);
    diagnostics.push(modelError('io-inputs-embeds',
      has(naming.inputIds)
        ? `${graphName} takes \`${naming.inputsEmbeds}\` besides \`${naming.inputIds}\`; onnxruntime needs every input fed, and kvscope feeds token ids only.`
        : `${graphName} takes \`${naming.inputsEmbeds}\` and no \`${naming.inputIds}\`: it is the text decoder of a multimodal export, whose ` +
          'token embeddings come from a separate embedding graph. kvscope feeds token ids to a decoder that embeds them itself.',
      'Use the text-only export of the model (a decoder whose first input is input_ids), e.g. `optimum-cli export onnx --task text-generation-with-past` on the text model.'));
  }

  const paged = inputs.filter((info) => PAGED.test(info.name));
  if (paged.length > 0) {
    const pools = inputs.filter((info) => CACHE_POOL.test(info.name));
    refuse([...paged, ...pools]);
    diagnostics.push(modelError('io-paged-attention',
      `${graphName} takes paged-attention inputs ${quote(paged)}: its KV cache is a pool of blocks addressed through a block table ` +
      '(a serving export), not the per-sequence cache that transformers\' DynamicCache and QuantizedCache keep.',
      'Use the plain decoder export with past_key_values inputs and present outputs (optimum-cli export onnx --task text-generation-with-past).'));
  }

  const writeIndices = inputs.filter((info) => WRITE_INDEX.test(info.name) && !names.has(info.name));
  const staticCaches = inputs.filter((info) => CACHE_POOL.test(info.name) && !names.has(info.name));
  if (writeIndices.length > 0 || staticCaches.length > 0) {
    refuse([...writeIndices, ...staticCaches]);
    diagnostics.push(modelError('io-static-cache',
      `${graphName} keeps a static KV cache (${quote([...writeIndices, ...staticCaches].slice(0, 4))}${writeIndices.length + staticCaches.length > 4 ? ', …' : ''}): ` +
      'fixed-size buffers the graph writes in place at given indices. kvscope\'s cache is transformers\' (past fed in, present returned ' +
      'one token longer every step), which such a graph does not return.',
      'Use the dynamic-cache export (optimum-cli export onnx --task text-generation-with-past), whose present.N outputs grow with the sequence.'));
  }

  const prequantized = inputs.filter((info) => !names.has(info.name) && (
    (isKvInput(info.name, naming) && QUANTIZED_TYPE.test(info.type)) || KV_QUANT_PARAMETER.test(info.name) || info.shape.includes('kv_cache_dim')));
  if (prequantized.length > 0) {
    refuse(prequantized);
    diagnostics.push(modelError('io-kv-prequantized',
      `${graphName} keeps a pre-quantized KV cache: ${quote(prequantized.slice(0, 4))}${prequantized.length > 4 ? `, … (${prequantized.length} in all)` : ''}. ` +
      'The graph quantizes its keys and values itself, so a kvscope run would quantize codes, not the keys and values transformers\' QuantizedCache sees.',
      'Use the export with a float KV cache (model.onnx or model_fp16.onnx; in transformers.js, a dtype whose kv_cache_dtype is float16 or float32).'));
  }
  return { names, diagnostics };
}

/** vLLM/TensorRT-LLM-style paged attention inputs. */
const PAGED = /^(block_tables?|block_table_\d+|slot_mapping|cu_seqlens(_[qk])?|cumulative_sequence_lengths?|context_lens|kv_block_indices)$/i;
/** Fixed-size cache buffers (`key_cache.0`, `value_cache_3`, `past_key_cache.1`). */
const CACHE_POOL = /^(past_)?(key|value)_cache([._]\d+)?$/i;
/** Where a static cache writes this step's keys and values. */
const WRITE_INDEX = /^(write_indices|cache_position|cache_indices|kv_write_indices|update_indices)$/i;
/** Companions of a quantized KV cache. */
const KV_QUANT_PARAMETER = /^(past|present|cache|kv).*(scale|zero_?point|_zp)(s)?([._]\d+)?$|^past_key_values\.\d+\.(key|value)_(scale|zero_?point|zp)$/i;
const QUANTIZED_TYPE = /^(u?int(2|4|8|16)|float8.*)$/;

function isKvInput(name: string, naming: IoNaming): boolean {
  const kv = naming.kv;
  if (kv.packing === 'combined') return layerOf(kv.past, name) !== null;
  return layerOf(kv.pastKey, name) !== null || layerOf(kv.pastValue, name) !== null;
}
