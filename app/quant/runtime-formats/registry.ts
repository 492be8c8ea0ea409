import { LLAMA_CPP_FORMATS } from './llama-cpp.js';
import { MLX_FORMATS } from './mlx-affine.js';
import { NVFP4 } from './nvfp4.js';
import { ORT_WEBGPU_Q8 } from './ort-webgpu.js';
import { ORT_WEBGPU_Q4 } from './ort-webgpu-q4.js';
import { VLLM_FORMATS } from './vllm-fp8.js';
import { RuntimeFormatError, type RuntimeFormat } from './types.js';

/**
 * Every runtime KV format by the name the CLI takes (`--format F`), in the order --help lists them.
 * All of them are kvscope extensions: transformers' QuantizedCache stays the default everywhere.
 */
export const RUNTIME_FORMATS: readonly RuntimeFormat[] = [
  ...LLAMA_CPP_FORMATS,
  ...VLLM_FORMATS,
  NVFP4,
  ...MLX_FORMATS,
  ORT_WEBGPU_Q8,
  ORT_WEBGPU_Q4,
];

export const RUNTIME_FORMAT_NAMES: readonly string[] = RUNTIME_FORMATS.map((f) => f.name);

export function runtimeFormat(name: string): RuntimeFormat {
  const found = RUNTIME_FORMATS.find((f) => f.name === name);
  if (found !== undefined) return found;
  throw new RuntimeFormatError(`unknown KV format "${name}". Formats: ${RUNTIME_FORMAT_NAMES.join(', ')}.`);
}
