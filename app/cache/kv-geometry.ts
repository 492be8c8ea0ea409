import { CacheError } from '../errors.js';
import type { KvDtype, KvShape, KvTensor } from '../tensor/kv-tensor.js';

/**
 * What stays fixed over a layer's life: everything in `[batch, kvHeads, seq, headDim]` except seq,
 * and the dtype. Keys and values have a geometry each: their head dims may differ (e.g. MLA models).
 */
export interface KvGeometry {
  readonly batch: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly dtype: KvDtype;
}

/** The shapes a layer's first update fixes for keys and values. */
export interface KvPairGeometry {
  readonly key: KvGeometry;
  readonly value: KvGeometry;
}

export function geometryOf(x: KvTensor): KvGeometry {
  const [batch, kvHeads, , headDim] = x.shape;
  return { batch, kvHeads, headDim, dtype: x.dtype };
}

/** batch·kvHeads: the number of independent `[seq, headDim]` slabs along which seq grows. */
export function slabCount(g: KvGeometry): number {
  return g.batch * g.kvHeads;
}

export function shapeWithSeq(g: KvGeometry, seq: number): KvShape {
  return [g.batch, g.kvHeads, seq, g.headDim];
}

/**
 * Checks one update's key/value pair and returns its token count n. The first update fixes the
 * geometry (`expected` null); later updates must match it. transformers would `torch.cat` mismatched
 * shapes into an exception or, for dtypes, silently promote; kvscope refuses both up front.
 */
export function checkUpdate(key: KvTensor, value: KvTensor, expected: KvPairGeometry | null): number {
  const n = key.shape[2];
  if (value.shape[2] !== n) {
    throw new CacheError(
      `key and value must carry the same number of new tokens: key has ${n}, value has ${value.shape[2]} ` +
      `(shapes [${key.shape.join(', ')}] and [${value.shape.join(', ')}]). Pass the same positions for both.`,
    );
  }
  if (key.shape[0] !== value.shape[0] || key.shape[1] !== value.shape[1] || key.dtype !== value.dtype) {
    throw new CacheError(
      `key and value must share batch, kv heads and dtype: key is [${key.shape.join(', ')}] ${key.dtype}, ` +
      `value is [${value.shape.join(', ')}] ${value.dtype}.`,
    );
  }
  if (expected !== null) {
    checkAgainst('key', key, expected.key);
    checkAgainst('value', value, expected.value);
  }
  return n;
}

function checkAgainst(name: string, x: KvTensor, g: KvGeometry): void {
  const [batch, kvHeads, seq, headDim] = x.shape;
  if (batch === g.batch && kvHeads === g.kvHeads && headDim === g.headDim && x.dtype === g.dtype) return;
  throw new CacheError(
    `${name} update of shape [${x.shape.join(', ')}] ${x.dtype} does not match this layer's cache ` +
    `[${g.batch}, ${g.kvHeads}, seq, ${g.headDim}] ${g.dtype}: expected [${g.batch}, ${g.kvHeads}, ${seq}, ${g.headDim}] ${g.dtype}. ` +
    'A cache holds one sequence batch; start a new cache for a different batch or model.',
  );
}
