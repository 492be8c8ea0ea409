/**
 * Typed errors of the core. Each message states what was expected, what was found and what to do.
 * Where transformers or the backend library has an exact message, it comes first, verbatim, so users
 * can search for it (STYLE.md §10); kvscope's explanation follows it.
 */
export class KvscopeError extends Error {
  override readonly name: string = 'KvscopeError';
}

/** A config file or model folder that cannot be read or makes no sense. */
export class ConfigError extends KvscopeError {
  override readonly name = 'ConfigError';
}

/** A tensor or parameter set that a quantization backend refuses. */
export class QuantizationError extends KvscopeError {
  override readonly name = 'QuantizationError';
}

/** A malformed or unsupported `.npy` file. */
export class NpyFormatError extends KvscopeError {
  override readonly name = 'NpyFormatError';
}

/** A cache used against its contract (for example a beam reorder, which transformers gets wrong). */
export class CacheError extends KvscopeError {
  override readonly name = 'CacheError';
}
