import { LLAMA_CPP_FORMATS } from './llama-cpp.js';
import { RuntimeFormatError, type RuntimeFormat } from './types.js';

/**
 * Every runtime KV format by the name the CLI takes (`--format F`), in the order --help lists them.
 * All of them are kvscope extensions: transformers' QuantizedCache stays the default everywhere.
 */
export const RUNTIME_FORMATS: readonly RuntimeFormat[] = [
  ...LLAMA_CPP_FORMATS,
];

export const RUNTIME_FORMAT_NAMES: readonly string[] = RUNTIME_FORMATS.map((f) => f.name);

export function runtimeFormat(name: string): RuntimeFormat {
  const found = RUNTIME_FORMATS.find((f) => f.name === name);
  if (found !== undefined) return found;
  throw new RuntimeFormatError(`unknown KV format "${name}". Formats: ${RUNTIME_FORMAT_NAMES.join(', ')}.`);
}
