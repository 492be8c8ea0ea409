import { elementCount, kvTensor, type KvDtype, type KvShape, type KvTensor } from '../../tensor/kv-tensor.js';

/**
 * Plain, independent tensor helpers for cache tests: each loops over `[batch, kvHeads, seq, headDim]`
 * the obvious way, so the cache's buffer arithmetic is checked against something it does not share.
 */

/** Deterministic values in [-2, 2) (mulberry32), exactly representable in float16 when rounded to 1/256. */
export function randomTensor(shape: KvShape, seed: number, dtype: KvDtype = 'float32'): KvTensor {
  let state = seed >>> 0;
  const data = new Float32Array(elementCount(shape));
  for (let i = 0; i < data.length; i++) {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const u = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    data[i] = Math.round((u * 4 - 2) * 256) / 256;
  }
  return kvTensor(shape, dtype, data);
}

/** `x[:, :, start:end, :]`, copied. */
export function sliceSeq(x: KvTensor, start: number, end: number): KvTensor {
  const [batch, heads, seq, dim] = x.shape;
  const out = new Float32Array(batch * heads * (end - start) * dim);
  let o = 0;
  for (let slab = 0; slab < batch * heads; slab++) {
    for (let s = start; s < end; s++) {
      for (let d = 0; d < dim; d++) out[o++] = x.data[(slab * seq + s) * dim + d]!;
    }
  }
  return kvTensor([batch, heads, end - start, dim], x.dtype, out);
}

/** `torch.cat(parts, dim=-2)`, copied. */
export function concatSeq(parts: readonly KvTensor[]): KvTensor {
  const first = parts[0]!;
  const [batch, heads, , dim] = first.shape;
  const total = parts.reduce((sum, p) => sum + p.shape[2], 0);
  const out = new Float32Array(batch * heads * total * dim);
  let o = 0;
  for (let slab = 0; slab < batch * heads; slab++) {
    for (const p of parts) {
      const seq = p.shape[2];
      for (let i = 0; i < seq * dim; i++) out[o++] = p.data[slab * seq * dim + i]!;
    }
  }
  return kvTensor([batch, heads, total, dim], first.dtype, out);
}

export function copyTensor(x: KvTensor): KvTensor {
  return kvTensor(x.shape, x.dtype, x.data.slice());
}

