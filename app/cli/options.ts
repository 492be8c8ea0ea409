import { UsageError } from './io.js';

/**
 * Typed access to parsed command-line values. The Node entry parses argv with util.parseArgs and
 * hands the raw strings here, so validation and its messages are shared by every front end.
 */
export type RawOptions = Readonly<Record<string, string | boolean | undefined>>;

export function requireString(options: RawOptions, name: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value.length === 0) throw new UsageError(`--${name} is required.`);
  return value;
}

export function optionalString(options: RawOptions, name: string): string | undefined {
  const value = options[name];
  return typeof value === 'string' ? value : undefined;
}

export function integerOption(options: RawOptions, name: string, fallback?: number): number {
  const value = options[name];
  if (value === undefined) {
    if (fallback === undefined) throw new UsageError(`--${name} is required.`);
    return fallback;
  }
  if (typeof value !== 'string' || !/^-?\d+$/.test(value.trim())) {
    throw new UsageError(`--${name} must be an integer, got ${JSON.stringify(value)}.`);
  }
  return Number(value);
}

export function choiceOption<T extends string>(options: RawOptions, name: string, choices: readonly T[], fallback?: T): T {
  const value = options[name];
  if (value === undefined) {
    if (fallback === undefined) throw new UsageError(`--${name} is required (one of ${choices.join(', ')}).`);
    return fallback;
  }
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
    throw new UsageError(`--${name} must be one of ${choices.join(', ')}, got ${JSON.stringify(value)}.`);
  }
  return value as T;
}

/** A decimal number (`0.7`, `1e-3`); `fallback` when the flag is absent. */
export function numberOption(options: RawOptions, name: string, fallback: number): number {
  const value = options[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value.trim())) {
    throw new UsageError(`--${name} must be a number, got ${JSON.stringify(value)}.`);
  }
  return Number(value);
}
