import { EvalInputError } from './lab-errors.js';
import { SENSITIVITY_PRESETS, type SensitivityPreset } from './sensitivity.js';

/** A value a sweep gives an eval option: what its JSON spec can hold. */
export type SweepValue = string | number | boolean;

/** The option table of `eval` a sweep's keys are checked against: name → string- or boolean-valued. */
export type EvalOptionTable = Readonly<Record<string, { readonly type: 'string' | 'boolean' }>>;

/**
 * `kvscope sweep --spec sweep.json`: `{"model", "text" or "text-ids", "fixed": {…}, "grid": {…},
 * "points": [{…}], "preset"}`. Keys inside fixed, grid and points are eval's long option names without the dashes, so
 * every option of eval (those added later included) can be fixed, varied or listed; grid is a
 * cartesian product of value lists, points adds single configurations, a preset adds the sensitivity
 * points (sensitivity.ts); the sweep is their union, duplicates once.
 */
export interface SweepSpec {
  readonly model: string;
  /** a text file (relative to the spec's folder), or absent for kvscope's default text */
  readonly text?: string;
  /** eval's --text-ids: a file of token ids (relative to the spec's folder), for folders without a tokenizer; the spec's own key, so sweep.json's spec reads back */
  readonly 'text-ids'?: string;
  readonly fixed: Readonly<Record<string, SweepValue>>;
  readonly grid: Readonly<Record<string, readonly SweepValue[]>>;
  readonly points: readonly Readonly<Record<string, SweepValue>>[];
  readonly preset?: SensitivityPreset;
}

/** eval options a sweep point cannot set: where results go is the sweep's business. */
export const SWEEP_RESERVED_KEYS: readonly string[] = ['out', 'json', 'per-token', 'model', 'text', 'text-ids'];

/** Reads and checks a spec against eval's option table; `source` names the file in messages. */
export function parseSweepSpec(text: string, options: EvalOptionTable, source: string): SweepSpec {
  let value: unknown;
  try {
    // Windows editors save UTF-8 with a byte order mark; it is no part of the JSON (RFC 8259 §8.1 lets parsers ignore it).
    value = JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text);
  } catch (error) {
    throw new EvalInputError(`${source} is not valid JSON: ${(error as Error).message}.`);
  }
  return checkSweepSpec(value, options, source);
}

export function checkSweepSpec(value: unknown, options: EvalOptionTable, source: string): SweepSpec {
  const spec = asObject(value, source);
  for (const key of Object.keys(spec)) {
    if (!['model', 'text', 'text-ids', 'fixed', 'grid', 'points', 'preset'].includes(key)) {
      throw new EvalInputError(`${source}: unknown key "${key}".`, 'A spec has "model", "text" or "text-ids", "fixed", "grid", "points" and "preset" (docs in the README\'s lab section).');
    }
  }
  if (typeof spec['model'] !== 'string' || spec['model'] === '') throw new EvalInputError(`${source}: "model" must be a model folder or a synthetic model name.`);
  if (spec['text'] !== undefined && typeof spec['text'] !== 'string') throw new EvalInputError(`${source}: "text" must be a file path (or left out for kvscope's default text).`);
  const textIds = spec['text-ids'];
  if (textIds !== undefined && (typeof textIds !== 'string' || textIds === '')) throw new EvalInputError(`${source}: "text-ids" must be the path of a file of token ids.`);
  if (textIds !== undefined && spec['text'] !== undefined) throw new EvalInputError(`${source}: "text" and "text-ids" both give the text; keep one.`);
  const fixed = readOptionValues(spec['fixed'] ?? {}, options, `${source}: fixed`);
  const gridObject = asObject(spec['grid'] ?? {}, `${source}: grid`);
  const grid: Record<string, SweepValue[]> = {};
  for (const [key, list] of Object.entries(gridObject)) {
    if (!Array.isArray(list) || list.length === 0) throw new EvalInputError(`${source}: grid.${key} must be a non-empty list of values.`);
    grid[key] = list.map((item, index) => checkValue(key, item, options, `${source}: grid.${key}[${index}]`));
  }
  const pointsValue = spec['points'] ?? [];
  if (!Array.isArray(pointsValue)) throw new EvalInputError(`${source}: "points" must be a list of objects.`);
  const points = pointsValue.map((point, index) => readOptionValues(point, options, `${source}: points[${index}]`));
  const preset = spec['preset'];
  if (preset !== undefined && !(SENSITIVITY_PRESETS as readonly unknown[]).includes(preset)) {
    throw new EvalInputError(`${source}: "preset" must be one of ${SENSITIVITY_PRESETS.join(', ')}, got ${JSON.stringify(preset)}.`);
  }
  return {
    model: spec['model'], ...(typeof spec['text'] === 'string' ? { text: spec['text'] } : {}),
    ...(typeof textIds === 'string' ? { 'text-ids': textIds } : {}),
    fixed, grid, points, ...(preset === undefined ? {} : { preset: preset as SensitivityPreset }),
  };
}

function readOptionValues(value: unknown, options: EvalOptionTable, where: string): Record<string, SweepValue> {
  const object = asObject(value, where);
  const out: Record<string, SweepValue> = {};
  for (const [key, item] of Object.entries(object)) out[key] = checkValue(key, item, options, `${where}.${key}`);
  return out;
}

function checkValue(key: string, value: unknown, options: EvalOptionTable, where: string): SweepValue {
  if (SWEEP_RESERVED_KEYS.includes(key)) {
    throw new EvalInputError(`${where}: "${key}" is not a sweep key (${key === 'model' || key === 'text' || key === 'text-ids' ? `give "${key}" once at the top of the spec` : 'the sweep writes every point\'s record itself'}).`);
  }
  const option = options[key];
  if (option === undefined) {
    const names = Object.keys(options).filter((name) => !SWEEP_RESERVED_KEYS.includes(name));
    throw new EvalInputError(`${where}: "${key}" is not an option of kvscope eval.`, `Keys are eval's long option names without the dashes: ${names.join(', ')}.`);
  }
  if (option.type === 'boolean') {
    if (typeof value !== 'boolean') throw new EvalInputError(`${where}: --${key} is a switch; give true or false.`);
    return value;
  }
  if (typeof value !== 'string' && !(typeof value === 'number' && Number.isFinite(value))) {
    throw new EvalInputError(`${where}: --${key} takes a value; give a string or a number, got ${describeValue(value)}.`);
  }
  return value;
}

/**
 * What a refused value is, in a few words. Never JSON.stringify: a list nested 200,000 deep would
 * overflow the stack, and 1e309 (past a double's range, so Infinity after JSON.parse) prints "null".
 */
function describeValue(value: unknown): string {
  if (typeof value === 'number') return `${String(value)}, a number out of range (a double holds at most ±1.8e308)`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  return typeof value;
}

function asObject(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new EvalInputError(`${where} must be a JSON object.`);
  return value as Record<string, unknown>;
}
