import { sensitivityPoints } from './sensitivity.js';
import type { SweepSpec, SweepValue } from './sweep-spec.js';
import { EvalInputError } from './lab-errors.js';

/** One configuration of a sweep: its place in the expansion, its folder name and its eval options. */
export interface SweepPoint {
  /** 0-based, in expansion order (grid first, then the preset crossed with the grid, then points) */
  readonly index: number;
  /** the folder name: the keys that vary across the sweep, `key-value` joined by `_` (filesystem-safe) */
  readonly name: string;
  /** every eval option of the point (fixed ones included), keys sorted */
  readonly options: Readonly<Record<string, SweepValue>>;
}

/**
 * The sweep's points: the grid's cartesian product over `fixed`, the preset's points crossed with it,
 * then the listed points over `fixed`, duplicates (the same options) once, in that order. The layer
 * count is the model's (a `layers` preset has a point per layer).
 */
export function expandSweep(spec: SweepSpec, layerCount: number): SweepPoint[] {
  const combos = cartesian(spec.grid);
  const candidates: Record<string, SweepValue>[] = [];
  const presetPoints = spec.preset === undefined ? [] : sensitivityPoints(spec.preset, layerCount);
  if (presetPoints.length === 0) {
    if (Object.keys(spec.grid).length > 0 || spec.points.length === 0) for (const combo of combos) candidates.push({ ...spec.fixed, ...combo });
  } else {
    for (const combo of combos) for (const point of presetPoints) candidates.push({ ...spec.fixed, ...combo, ...point });
  }
  for (const point of spec.points) candidates.push({ ...spec.fixed, ...point });
  const seen = new Set<string>();
  const unique: Record<string, SweepValue>[] = [];
  for (const candidate of candidates) {
    const sorted = sortKeys(candidate);
    const key = JSON.stringify(sorted);
    if (seen.has(key)) continue;
    seen.add(key);
    unique.push(sorted);
  }
  const varied = variedKeys(unique);
  const names = new Set<string>();
  return unique.map((options, index) => {
    const name = pointName(options, varied);
    if (names.has(name)) throw new EvalInputError(`two points of the sweep would share the folder ${name}; give their values distinct spellings.`);
    names.add(name);
    return { index, name, options };
  });
}

/** `--shard i/N`: every N-th point, starting with the i-th (1-based), so shards split any sweep evenly. */
export function shardPoints(points: readonly SweepPoint[], shard: { index: number; count: number } | null): SweepPoint[] {
  if (shard === null) return [...points];
  return points.filter((point) => point.index % shard.count === shard.index - 1);
}

/** Parses `i/N` (1 ≤ i ≤ N). */
export function parseShard(text: string): { index: number; count: number } {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = Number(match?.[1]);
  const count = Number(match?.[2]);
  if (match === null || count < 1 || index < 1 || index > count) {
    throw new EvalInputError(`--shard must be i/N with 1 ≤ i ≤ N (for example 2/3), got ${JSON.stringify(text)}.`);
  }
  return { index, count };
}

function cartesian(grid: Readonly<Record<string, readonly SweepValue[]>>): Record<string, SweepValue>[] {
  let combos: Record<string, SweepValue>[] = [{}];
  for (const [key, values] of Object.entries(grid)) {
    combos = combos.flatMap((combo) => values.map((value) => ({ ...combo, [key]: value })));
  }
  return combos;
}

function sortKeys(options: Record<string, SweepValue>): Record<string, SweepValue> {
  return Object.fromEntries(Object.keys(options).sort().map((key) => [key, options[key]!]));
}

/** Keys whose value is not the same in every point (or missing from some). */
function variedKeys(points: readonly Record<string, SweepValue>[]): string[] {
  const keys = new Set(points.flatMap((point) => Object.keys(point)));
  return [...keys].sort().filter((key) => new Set(points.map((point) => JSON.stringify(point[key] ?? null))).size > 1);
}

function pointName(options: Readonly<Record<string, SweepValue>>, varied: readonly string[]): string {
  const parts = varied.filter((key) => options[key] !== undefined).map((key) => `${key}-${nameValue(String(options[key]))}`);
  const name = (parts.length === 0 ? 'point' : parts.join('_')).replace(/[^A-Za-z0-9._=-]+/g, '-');
  return name.length <= 200 ? name : name.slice(0, 200);
}

/**
 * A value as a folder name spells it: itself, or past 32 characters (a layer map's text) its FNV-1a
 * hash, so that a long value neither hides the keys after it under the 200-character cut nor makes two points share a folder.
 */
function nameValue(value: string): string {
  if (value.length <= 32) return value;
  let hash = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) hash = Math.imul(hash ^ value.charCodeAt(i), 0x01000193) >>> 0;
  return `h${hash.toString(16).padStart(8, '0')}`;
}
