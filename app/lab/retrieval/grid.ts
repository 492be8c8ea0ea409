import { SeededRandom } from '../../synthetic/seeded-random.js';
import { RetrievalTaskError } from './retrieval-task.js';

/**
 * The depth × length grid of a retrieval evaluation: every (length, depth) cell holds `samples`
 * samples, each with its own seed derived from the run's seed and the cell's coordinates, so a cell's
 * samples are the same whichever other lengths or depths a run includes, and a cell can be re-run alone.
 */
export interface GridSpec {
  /** prompt lengths in tokens */
  readonly lengths: readonly number[];
  /** needle depths in percent; ignored for tasks without a needle (pass `hasDepth: false`) */
  readonly depths: readonly number[];
  readonly samples: number;
  readonly seed: number;
  readonly hasDepth: boolean;
}

export interface GridCell {
  readonly length: number;
  /** null for tasks without a needle: one cell per length */
  readonly depth: number | null;
  readonly sampleSeeds: readonly number[];
}

export function retrievalGrid(spec: GridSpec): GridCell[] {
  checkAxis(spec.lengths, 'length', (length) => Number.isInteger(length) && length >= 1, 'a positive whole number of tokens');
  const depths: (number | null)[] = spec.hasDepth ? [...spec.depths] : [null];
  if (spec.hasDepth) checkAxis(spec.depths, 'depth', (depth) => depth >= 0 && depth <= 100, 'a percentage in 0–100');
  if (!Number.isInteger(spec.samples) || spec.samples < 1) {
    throw new RetrievalTaskError(`samples ${spec.samples} is not a positive whole number; give how many samples each cell holds, such as 5`);
  }
  const cells: GridCell[] = [];
  for (const length of spec.lengths) {
    for (const depth of depths) {
      const sampleSeeds = Array.from({ length: spec.samples }, (_, index) => sampleSeed(spec.seed, length, depth, index));
      cells.push({ length, depth, sampleSeeds });
    }
  }
  return cells;
}

/** A sample's seed: a pure function of the run's seed and the sample's coordinates. */
export function sampleSeed(seed: number, length: number, depth: number | null, index: number): number {
  return new SeededRandom(seed, `retrieval:${length}:${depth ?? '-'}:${index}`).nextUint32();
}

export interface SampleOutcome {
  readonly length: number;
  readonly depth: number | null;
  /** the sample's score in [0, 1] (score.ts) */
  readonly score: number;
}

/** The accuracy map as plain data for a chart: rows are depths (null for none), columns are lengths. */
export interface AccuracyMap {
  readonly lengths: readonly number[];
  readonly depths: readonly (number | null)[];
  /** [depths][lengths] mean score of the cell's samples, null where no sample was scored */
  readonly accuracy: readonly (readonly (number | null)[])[];
  /** [depths][lengths] samples scored */
  readonly counts: readonly (readonly number[])[];
}

export function accuracyMap(cells: readonly GridCell[], outcomes: readonly SampleOutcome[]): AccuracyMap {
  const lengths = [...new Set(cells.map((cell) => cell.length))];
  const depths = [...new Set(cells.map((cell) => cell.depth))];
  const sums = depths.map(() => lengths.map(() => 0));
  const counts = depths.map(() => lengths.map(() => 0));
  for (const outcome of outcomes) {
    const row = depths.indexOf(outcome.depth);
    const column = lengths.indexOf(outcome.length);
    if (row < 0 || column < 0) {
      throw new RetrievalTaskError(`an outcome at length ${outcome.length}, depth ${String(outcome.depth)} is outside the grid; score only the grid's samples`);
    }
    if (!(outcome.score >= 0 && outcome.score <= 1)) {
      throw new RetrievalTaskError(`a score of ${outcome.score} is outside [0, 1]`);
    }
    sums[row]![column]! += outcome.score;
    counts[row]![column]! += 1;
  }
  const accuracy = sums.map((row, r) => row.map((sum, c) => (counts[r]![c]! === 0 ? null : sum / counts[r]![c]!)));
  return { lengths, depths, accuracy, counts };
}

function checkAxis(values: readonly number[], name: string, valid: (value: number) => boolean, what: string): void {
  if (values.length === 0) throw new RetrievalTaskError(`no ${name}s given; give at least one`);
  const bad = values.find((value) => !Number.isFinite(value) || !valid(value));
  if (bad !== undefined) throw new RetrievalTaskError(`${name} ${bad} is not ${what}`);
  if (new Set(values).size !== values.length) throw new RetrievalTaskError(`a ${name} is given twice in ${values.join(',')}; give each once`);
}
