import type { KvDtype } from '../../tensor/kv-tensor.js';
import { roundToFloat16 } from '../../tensor/float16.js';
import { q4_0, q4_1, q5_0, q5_1, q8_0, QK, type GgmlBlockCodec } from './ggml-blocks.js';
import { iq4NlCodec } from './ggml-iq4-nl.js';
import { llamaRotationRefusal, llamaRotationSize, rotateRows } from './llama-cpp-rotation.js';
import { NO_TENSOR_PARAMS, type FormatGeometry, type RuntimeFormat } from './types.js';

/**
 * llama.cpp's KV cache types (`--cache-type-k/-v`, `-ctk/-ctv`): each K or V head vector is stored
 * as head_dim / 32 ggml blocks (ggml/src/ggml-quants.c), written once by `ggml_set_rows` when the
 * token enters the cache. `+rot` adds the Hadamard rotation current llama.cpp applies by default
 * (llama-cpp-rotation.ts).
 */
type GgmlType = 'q8_0' | 'q4_0' | 'q4_1' | 'q5_0' | 'q5_1' | 'iq4_nl';

const DESCRIPTIONS: Record<GgmlType, string> = {
  q8_0: 'int8 codes, one fp16 scale per 32 values (8.5 bits/value)',
  q4_0: '4-bit codes, symmetric, one fp16 scale per 32 values (4.5 bits/value)',
  q4_1: '4-bit codes, fp16 scale and minimum per 32 values (5 bits/value)',
  q5_0: '5-bit codes, symmetric, one fp16 scale per 32 values (5.5 bits/value)',
  q5_1: '5-bit codes, fp16 scale and minimum per 32 values (6 bits/value)',
  iq4_nl: '4-bit indices into a fixed non-linear table, one fp16 scale per 32 values (4.5 bits/value)',
};

export const GGML_TYPES: readonly GgmlType[] = ['q8_0', 'q4_0', 'q4_1', 'q5_0', 'q5_1', 'iq4_nl'];

function codecFor(type: GgmlType): GgmlBlockCodec {
  switch (type) {
    case 'q8_0': return q8_0;
    case 'q4_0': return q4_0;
    case 'q4_1': return q4_1;
    case 'q5_0': return q5_0;
    case 'q5_1': return q5_1;
    case 'iq4_nl': return iq4NlCodec();
  }
}

/**
 * llama.cpp's refusal, verbatim: the cache is created only when head_dim is a multiple of the type's
 * block size. Current llama.cpp logs `K cache type %s with block size %u does not divide
 * n_embd_head_k=%u` from `llama_init_from_model` (src/llama-context.cpp) and returns no context (V alike);
 * older trees abort on `GGML_ASSERT(hparams.n_embd_head_k % ggml_blck_size(type_k) == 0)` (src/llama.cpp),
 * the line the issue saw on stories260k. Both are quoted, then what to do.
 */
export function llamaBlockRefusal(type: GgmlType, headDim: number, side: 'key' | 'value'): string | null {
  if (headDim > 0 && headDim % QK === 0) return null;
  const k = side === 'key' ? 'k' : 'v';
  const kv = side === 'key' ? 'K' : 'V';
  return `llama_init_from_model: ${kv} cache type ${type} with block size ${QK} does not divide n_embd_head_${k}=${headDim} ` +
    `(older llama.cpp: GGML_ASSERT(hparams.n_embd_head_${k} % ggml_blck_size(type_${k}) == 0) failed). ` +
    `llama.cpp stores ${kv} in blocks of ${QK} values, so it cannot create this cache. ` +
    'Choose a vLLM, NVFP4, MLX or ONNX Runtime format, or transformers\' cache.';
}

function toModelDtype(values: Float32Array, dtype: KvDtype): void {
  if (dtype !== 'float16') return;
  for (let i = 0; i < values.length; i++) values[i] = roundToFloat16(values[i]!);
}

function llamaFormat(type: GgmlType, rotated: boolean): RuntimeFormat {
  const codec = codecFor(type);
  const rowBytes = (g: FormatGeometry): number => (g.headDim / QK) * codec.blockBytes;
  return {
    name: `llama.cpp:${type}${rotated ? '+rot' : ''}`,
    runtime: 'llama.cpp',
    description: rotated
      ? `${type} after llama.cpp's Hadamard rotation (PR #21038; keys: the largest power of two ≥ 64 dividing head_dim, values: 64)`
      : `ggml ${DESCRIPTIONS[type]}`,
    source: rotated ? 'ggml/src/ggml-quants.c; src/llama-kv-cache.cpp (attn_rot_k/v, ggml_gen_hadamard)' : 'ggml/src/ggml-quants.c',
    tensorBytes: 0,
    tensorScale: 'none',
    refusal: (g) => llamaBlockRefusal(type, g.headDim, g.side) ?? (rotated ? llamaRotationRefusal(g.headDim, g.side) : null),
    rowBytes,
    tensorParams: () => NO_TENSOR_PARAMS,
    encodeRows(values, rows, g, _params, out) {
      let source = values;
      if (rotated) {
        const n = llamaRotationSize(g.headDim, g.side)!;
        source = values.slice(0, rows * g.headDim);
        rotateRows(source, rows, g.headDim, n, new Float64Array(n));
      }
      const blocks = g.headDim / QK;
      const bytes = rowBytes(g);
      for (let row = 0; row < rows; row++) {
        for (let b = 0; b < blocks; b++) codec.quantize(source, row * g.headDim + b * QK, out, row * bytes + b * codec.blockBytes);
      }
    },
    decodeRows(bytes, rows, g, _params, out) {
      const blocks = g.headDim / QK;
      const perRow = rowBytes(g);
      for (let row = 0; row < rows; row++) {
        for (let b = 0; b < blocks; b++) codec.dequantize(bytes, row * perRow + b * codec.blockBytes, out, row * g.headDim + b * QK);
      }
      if (rotated) {
        const n = llamaRotationSize(g.headDim, g.side)!;
        rotateRows(out, rows, g.headDim, n, new Float64Array(n));
      }
      toModelDtype(out.subarray(0, rows * g.headDim), g.dtype);
    },
  };
}

export const LLAMA_CPP_FORMATS: readonly RuntimeFormat[] = [
  ...GGML_TYPES.map((t) => llamaFormat(t, false)),
  ...GGML_TYPES.map((t) => llamaFormat(t, true)),
];
