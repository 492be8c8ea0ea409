/**
 * A model config as read from `config.json`: a JSON object. transformers turns it into a
 * `PreTrainedConfig`; kvscope keeps the plain object and reads attributes through `getAttribute`
 * (attribute-map.ts), which mirrors `getattr(config, name)`.
 */
export type ConfigObject = Readonly<Record<string, unknown>>;

export function isConfigObject(value: unknown): value is ConfigObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The text config's `model_type`, or undefined when absent or not a string. */
export function modelTypeOf(config: ConfigObject): string | undefined {
  const modelType = config['model_type'];
  return typeof modelType === 'string' ? modelType : undefined;
}

/**
 * JSON-ish description of a value for error messages: `"abc"`, `12`, `null`, `[…]`, `{…}`. A
 * non-finite number is named as the file wrote it when `written` is known (json-text.ts keeps it:
 * `1e309`), else as Python's json writes it (`NaN`, `Infinity`), never as JSON.stringify's `null`.
 */
export function describeValue(value: unknown, written?: string): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'number' && !Number.isFinite(value)) return written ?? (Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity');
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (isConfigObject(value)) return 'an object';
  return JSON.stringify(value);
}
