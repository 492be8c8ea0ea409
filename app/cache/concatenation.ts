import { CacheError } from '../errors.js';
import type { KvTensor } from '../tensor/kv-tensor.js';
import { slabCount, type KvGeometry } from './kv-geometry.js';

/**
 * Checks that `concatenated` can be `cat(history, x)` along seq (KvConcatenation): the right length,
 * the new rows `x` at the end of every slab, and the history's first row at the start of every slab.
 * The rows in between are the caller's word (checking them would cost the copy being saved); these
 * probes catch a graph whose present is not its past followed by the new rows. O(slabs·(1 + n)·width).
 *
 * `history` is `[slabs, historySeq, width]`; equality is exact (NaN equals NaN: the bits were copied).
 */
export function checkConcatenation(
  geometry: KvGeometry, history: Float32Array, historySeq: number, x: KvTensor, concatenated: Float32Array, what: string,
): void {
  const slabs = slabCount(geometry);
  const width = geometry.headDim;
  const n = x.shape[2];
  const seq = historySeq + n;
  if (concatenated.length !== slabs * seq * width) {
    throw new CacheError(
      `the ${what} concatenation has ${concatenated.length} values, but cat(history, new) is [${slabs}, ${seq}, ${width}] = ` +
      `${slabs * seq * width}; pass the present output of the step that was fed this cache's history, or none.`,
    );
  }
  for (let s = 0; s < slabs; s++) {
    const start = s * seq * width;
    const newStart = start + historySeq * width;
    if (!sameValues(concatenated, newStart, x.data, s * n * width, n * width)) throw mismatch(what, 'its last rows are not the new rows', s);
    if (historySeq > 0 && !sameValues(concatenated, start, history, s * historySeq * width, width)) {
      throw mismatch(what, 'its first row is not the cache history\'s first row', s);
    }
  }
}

function sameValues(a: Float32Array, aStart: number, b: Float32Array, bStart: number, length: number): boolean {
  for (let i = 0; i < length; i++) {
    const u = a[aStart + i]!;
    const v = b[bStart + i]!;
    if (u !== v && !(Number.isNaN(u) && Number.isNaN(v))) return false;
  }
  return true;
}

function mismatch(what: string, why: string, slab: number): CacheError {
  return new CacheError(
    `the ${what} concatenation is not cat(history, new): ${why} (slab ${slab}). A graph's present output must be the past ` +
    'it was fed followed by the new rows; pass no concatenation and the cache appends the rows itself.',
  );
}
