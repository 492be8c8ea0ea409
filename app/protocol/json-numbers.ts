/**
 * JSON has no Infinity or NaN, and `JSON.stringify` silently writes them as `null`, which would turn
 * an exact reconstruction (SNR = Infinity dB) into "missing". kvscope writes them as the strings
 * `"Infinity"`, `"-Infinity"` and `"NaN"` instead, so every JSON tool can still read the file and
 * kvscope's readers turn them back into numbers where a number is expected.
 */
const NON_FINITE: Readonly<Record<string, number>> = { Infinity: Infinity, '-Infinity': -Infinity, NaN: NaN };

/** A `JSON.stringify` replacer: non-finite numbers become their string names. */
export function encodeNonFiniteNumbers(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isFinite(value) ? String(value) : value;
}

/** The number a JSON value stands for, or undefined when it is not one. */
export function decodeJsonNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(NON_FINITE, value) ? NON_FINITE[value] : undefined;
}

/** `JSON.stringify` with the non-finite encoding above. */
export function stringifyJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, encodeNonFiniteNumbers, indent);
}
