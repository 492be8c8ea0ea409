/**
 * The quanto kernels as WebAssembly SIMD (spec §3.1 steps 2–5), in AssemblyScript. Built by
 * app/wasm/kernels/build.mjs into app/wasm/built/quanto-simd.ts; driven by app/quant/quanto/wasm/simd-runtime.ts,
 * which lays out the memory and checks every result against the plain kernels' bits.
 *
 * WebAssembly's f32x4 add, sub, mul and div are IEEE binary32 operations rounded to nearest-even, so
 * each lane computes exactly what torch computes on CPU in float32: no emulation needed. The float16
 * variants (names ending in "Half") round every arithmetic result to binary16 (roundHalf below).
 *
 * Pointers and sizes are byte offsets into the module's memory. Each quantize kernel returns 1 when a
 * group's min or max is NaN or ±Inf.
 *
 * - quantizeRows (axis 0, g a multiple of 16): per group, min/max, scale and shift, then 16 codes
 *   at a time narrowed to bytes, shifted into their bit slot and OR-ed into the packed row.
 * - quantizeColumnQuads (axis −1, D a multiple of 4): four token blocks at a time; per block the
 *   per-channel min/max over its g rows, then whole packed i32 words via a 4×4 byte transpose.
 *   quantizeColumns does the same one block at a time, for the last A mod 4 blocks.
 * - dequantizeRows / dequantizeColumnQuads / dequantizeColumns: unpack, `scale·q − shift` in f32x4,
 *   ungroup into memory order.
 *
 * Every kernel is generic over its element type: `f32` for float32, `u16` (binary16's storage) for
 * float16. The choice is a compile-time constant, so each export holds only its own arithmetic.
 */

/**
 * What follows every f32x4 arithmetic result of a kernel: nothing for float32; for float16, a
 * rounding to binary16, as torch rounds each op in half (spec §3.4). A half op computed in f32 and
 * then rounded to half is exact (double rounding is innocuous: 24 ≥ 2·11 + 2), so this reproduces
 * half arithmetic. The rounding is app/tensor/float16.ts's roundToFloat16 on float32 values: integer
 * round-to-nearest-even of the mantissa to 10 bits, ±Inf above 65504 (NaN stays NaN), and, for
 * subnormals, `(|x| + 0.5) − 0.5` in f32 (exact there: 2^-24 is the f32 ulp of 0.5).
 */
// @ts-ignore: decorator
@inline function round<T>(x: v128): v128 {
  if (sizeof<T>() == 4) return x;
  const sign = i32x4.splat(0x80000000);
  const abs = i32x4.splat(0x7fffffff);
  const magnitude = v128.and(x, abs);
  const signBit = v128.and(x, sign);
  // normal range: bits + 0xfff + lsb, low 13 bits cleared
  let r = v128.and(
    i32x4.add(i32x4.add(x, v128.and(i32x4.shr_u(x, 13), i32x4.splat(1))), i32x4.splat(0xfff)),
    i32x4.splat(0xffffe000),
  );
  // above 65504 (and not NaN): ±Inf
  const overflow = v128.and(i32x4.gt_s(v128.and(r, abs), i32x4.splat(0x477fe000)), f32x4.eq(x, x));
  r = v128.bitselect(v128.or(signBit, i32x4.splat(0x7f800000)), r, overflow);
  // below 2^-14: multiples of 2^-24, with x's sign
  const half = f32x4.splat(0.5);
  const subnormal = v128.or(f32x4.sub(f32x4.add(magnitude, half), half), signBit);
  return v128.bitselect(subnormal, r, i32x4.lt_s(magnitude, i32x4.splat(0x38800000)));
}

/**
 * Min and max run on integer keys `bits ^ ((bits >> 31) >>> 1)`, which order floats like numbers,
 * with −0 below +0 (kvscope's convention, max-optimizer.ts) and NaN beyond ±Inf, so a NaN always ends
 * up as a group's min or max and is caught by the finiteness check. The map is its own inverse.
 * One i32x4 min/max each, where WebAssembly's NaN-propagating f32x4.min/max cost several instructions.
 */
// @ts-ignore: decorator
@inline function orderedKey(v: v128): v128 {
  return v128.xor(v, i32x4.shr_u(i32x4.shr_s(v, 31), 1));
}

/** The f32 whose key is the min over the four lanes of a key vector. */
// @ts-ignore: decorator
@inline function minOfKeys(v: v128): f32 {
  v = i32x4.min_s(v, i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  const key = i32x4.extract_lane(i32x4.min_s(v, i8x16.shuffle(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11)), 0);
  return reinterpret<f32>(key ^ ((key >> 31) >>> 1));
}

/** The f32 whose key is the max over the four lanes of a key vector. */
// @ts-ignore: decorator
@inline function maxOfKeys(v: v128): f32 {
  v = i32x4.max_s(v, i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  const key = i32x4.extract_lane(i32x4.max_s(v, i8x16.shuffle(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11)), 0);
  return reinterpret<f32>(key ^ ((key >> 31) >>> 1));
}

/** 1 when a lane of lo or hi is NaN or ±Inf: `(hi − hi) + (lo − lo)` is NaN exactly then. */
// @ts-ignore: decorator
@inline function nonFinite(lo: v128, hi: v128): i32 {
  const s = f32x4.add(f32x4.sub(hi, hi), f32x4.sub(lo, lo));
  return <i32>v128.any_true(f32x4.ne(s, s));
}

/** MaxOptimizer in T: scale = (max − min) / qmax. (shift = −min needs no rounding.) */
// @ts-ignore: decorator
@inline function scaleOf<T>(lo: v128, hi: v128, qmax: v128): v128 {
  return round<T>(f32x4.div(round<T>(f32x4.sub(hi, lo)), qmax));
}

/**
 * Codes as i32 lanes: `q = (v + shift) / scale` in T, then `min(q, qmax)` (pmin keeps a NaN), then
 * `q + 2^23`, whose f32 addition rounds q to an integer half-to-even and leaves it in the low mantissa
 * bits, masked out with 0xff. Rounding after clamping gives the library's `clamp(round(q))`: any q above
 * qmax rounds to at least qmax. NaN (a zero-range group: 0 / 0) is a canonical NaN whose low bits are 0,
 * the code torch's uint8 cast gave; +Inf (a scale rounded to 0) clamps to qmax, as torch.clamp does.
 */
// @ts-ignore: decorator
@inline function codes<T>(value: v128, shift: v128, scale: v128, qmax: v128): v128 {
  const q = f32x4.pmin(round<T>(f32x4.div(round<T>(f32x4.add(value, shift)), scale)), qmax);
  return v128.and(f32x4.add(q, f32x4.splat(8388608)), i32x4.splat(0xff));
}

/** `scale·q − shift` in T for four codes (i32 lanes). */
// @ts-ignore: decorator
@inline function value<T>(q: v128, scale: v128, shift: v128): v128 {
  return round<T>(f32x4.sub(round<T>(f32x4.mul(f32x4.convert_i32x4_s(q), scale)), shift));
}

/** 16 i32 codes (four vectors) narrowed to 16 bytes. */
// @ts-ignore: decorator
@inline function narrowCodes(c0: v128, c1: v128, c2: v128, c3: v128): v128 {
  return i8x16.narrow_i16x8_u(i16x8.narrow_i32x4_s(c0, c1), i16x8.narrow_i32x4_s(c2, c3));
}

/**
 * 4×4 byte transpose: `[t0: d0 d1 d2 d3 | t1: … | t3: …]` ↔ `[d0: t0 t1 t2 t3 | d1: … | d3: …]`.
 * In the axis −1 packing, the bytes of four consecutive token blocks of one channel are adjacent
 * (`packed[r, d·A + a … d·A + a + 3]`), so after this transpose a whole i32 moves at once.
 */
// @ts-ignore: decorator
@inline function transpose4x4(v: v128): v128 {
  return i8x16.shuffle(v, v, 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
}

function quantizeRowsOf<T>(
  x: u32, groups: u32, g: u32, qmax: u32, bitShift: u32, dst: u32, scaleOut: u32, shiftOut: u32,
): i32 {
  const qv = f32x4.splat(<f32>qmax);
  let flag = 0;
  for (let r: u32 = 0; r < groups; r++) {
    const end = x + g * 4;
    let keyMin = orderedKey(v128.load(x));
    let keyMax = keyMin;
    for (let p = x + 16; p < end; p += 16) {
      const key = orderedKey(v128.load(p));
      keyMin = i32x4.min_s(keyMin, key);
      keyMax = i32x4.max_s(keyMax, key);
    }
    const lo = minOfKeys(keyMin);
    const hi = maxOfKeys(keyMax);
    const s = (hi - hi) + (lo - lo);
    flag |= <i32>(s != s);
    // splatted: the codes need vectors anyway
    const vs = scaleOf<T>(f32x4.splat(lo), f32x4.splat(hi), qv);
    const vz = f32x4.neg(f32x4.splat(lo));
    store<f32>(scaleOut, f32x4.extract_lane(vs, 0));
    store<f32>(shiftOut, f32x4.extract_lane(vz, 0));
    for (let p = x; p < end; p += 64) {
      const c = narrowCodes(
        codes<T>(v128.load(p), vz, vs, qv), codes<T>(v128.load(p, 16), vz, vs, qv),
        codes<T>(v128.load(p, 32), vz, vs, qv), codes<T>(v128.load(p, 48), vz, vs, qv),
      );
      v128.store(dst, v128.or(v128.load(dst), i8x16.shl(c, bitShift)));
      dst += 16;
    }
    x = end;
    scaleOut += 4;
    shiftOut += 4;
  }
  return flag;
}

/**
 * Per-channel min key (at `low`) and max key (at `high`) over the g rows of the block at x, then
 * MaxOptimizer per channel in place: `low` ← scale, `high` ← shift. Returns the nonfinite flag.
 */
// @ts-ignore: decorator
@inline function blockParams<T>(x: u32, g: u32, rowBytes: u32, low: u32, high: u32, qf: v128): i32 {
  for (let d: u32 = 0; d < rowBytes; d += 16) {
    const key = orderedKey(v128.load(x + d));
    v128.store(low + d, key);
    v128.store(high + d, key);
  }
  let row = x + rowBytes;
  for (let j: u32 = 1; j < g; j++) {
    for (let d: u32 = 0; d < rowBytes; d += 16) {
      const key = orderedKey(v128.load(row + d));
      v128.store(low + d, i32x4.min_s(v128.load(low + d), key));
      v128.store(high + d, i32x4.max_s(v128.load(high + d), key));
    }
    row += rowBytes;
  }
  let flag = 0;
  for (let d: u32 = 0; d < rowBytes; d += 16) {
    const lo = orderedKey(v128.load(low + d));
    const hi = orderedKey(v128.load(high + d));
    flag |= nonFinite(lo, hi);
    v128.store(low + d, scaleOf<T>(lo, hi, qf));
    v128.store(high + d, f32x4.neg(lo));
  }
  return flag;
}

function quantizeColumnsOf<T>(
  x: u32, blockCount: u32, a0: u32, g: u32, channels: u32, blocks: u32, qmax: u32, bits: u32,
  rowDim: u32, packed: u32, scaleOut: u32, shiftOut: u32, scratch: u32,
): i32 {
  const qf = f32x4.splat(<f32>qmax);
  const rowBytes = channels * 4;
  const scratchHigh = scratch + rowBytes;
  const cols = channels * blocks;
  let column = a0;
  let flag = 0;
  for (let a: u32 = 0; a < blockCount; a++) {
    // scratch ← scale, scratchHigh ← shift, per channel
    flag |= blockParams<T>(x, g, rowBytes, scratch, scratchHigh, qf);
    // scale/shift of channel d go to column d·A + a
    let p = column * 4;
    for (let d: u32 = 0; d < rowBytes; d += 4) {
      store<f32>(scaleOut + p, load<f32>(scratch + d));
      store<f32>(shiftOut + p, load<f32>(scratchHigh + d));
      p += blocks * 4;
    }
    // codes: row j of the block goes to packed row j mod rowDim, bit slot bits·⌊j / rowDim⌋
    let rowInBlock: u32 = 0;
    let bitShift: u32 = 0;
    let row = x;
    for (let j: u32 = 0; j < g; j++) {
      let dst = packed + rowInBlock * cols + column;
      for (let d: u32 = 0; d < rowBytes; d += 16) {
        const c = i32x4.shl(codes<T>(v128.load(row + d), v128.load(scratchHigh + d), v128.load(scratch + d), qf), bitShift);
        store<u8>(dst, load<u8>(dst) | i32x4.extract_lane(c, 0));
        dst += blocks;
        store<u8>(dst, load<u8>(dst) | i32x4.extract_lane(c, 1));
        dst += blocks;
        store<u8>(dst, load<u8>(dst) | i32x4.extract_lane(c, 2));
        dst += blocks;
        store<u8>(dst, load<u8>(dst) | i32x4.extract_lane(c, 3));
        dst += blocks;
      }
      row += rowBytes;
      if (++rowInBlock == rowDim) {
        rowInBlock = 0;
        bitShift += bits;
      }
    }
    x = row;
    column++;
  }
  return flag;
}

function dequantizeRowsOf<T>(
  packed: u32, groups: u32, g: u32, bitShift: u32, mask: u32, scale: u32, shift: u32, out: u32,
): void {
  const vm = i8x16.splat(<i8>mask);
  for (let r: u32 = 0; r < groups; r++) {
    const vs = f32x4.splat(load<f32>(scale));
    const vz = f32x4.splat(load<f32>(shift));
    const end = packed + g;
    for (; packed < end; packed += 16) {
      const b = v128.and(i8x16.shr_u(v128.load(packed), bitShift), vm);
      let h = i16x8.extend_low_i8x16_u(b);
      v128.store(out, value<T>(i32x4.extend_low_i16x8_u(h), vs, vz));
      v128.store(out, value<T>(i32x4.extend_high_i16x8_u(h), vs, vz), 16);
      h = i16x8.extend_high_i8x16_u(b);
      v128.store(out, value<T>(i32x4.extend_low_i16x8_u(h), vs, vz), 32);
      v128.store(out, value<T>(i32x4.extend_high_i16x8_u(h), vs, vz), 48);
      out += 64;
    }
    scale += 4;
    shift += 4;
  }
}

function dequantizeColumnsOf<T>(
  packed: u32, blockCount: u32, a0: u32, g: u32, channels: u32, blocks: u32, rowDim: u32, bits: u32,
  mask: u32, scale: u32, shift: u32, scratch: u32, out: u32,
): void {
  const vm = i32x4.splat(mask);
  const rowBytes = channels * 4;
  const scratchHigh = scratch + rowBytes;
  const cols = channels * blocks;
  let column = a0;
  for (let a: u32 = 0; a < blockCount; a++) {
    // gather this block's per-channel scale and shift (columns d·A + a) into scratch
    let p = column * 4;
    for (let d: u32 = 0; d < rowBytes; d += 4) {
      store<f32>(scratch + d, load<f32>(scale + p));
      store<f32>(scratchHigh + d, load<f32>(shift + p));
      p += blocks * 4;
    }
    let rowInBlock: u32 = 0;
    let bitShift: u32 = 0;
    for (let j: u32 = 0; j < g; j++) {
      let src = packed + rowInBlock * cols + column;
      for (let d: u32 = 0; d < rowBytes; d += 16) {
        let q = i32x4.splat(load<u8>(src));
        src += blocks;
        q = i32x4.replace_lane(q, 1, load<u8>(src));
        src += blocks;
        q = i32x4.replace_lane(q, 2, load<u8>(src));
        src += blocks;
        q = i32x4.replace_lane(q, 3, load<u8>(src));
        src += blocks;
        q = v128.and(i32x4.shr_u(q, bitShift), vm);
        v128.store(out, value<T>(q, v128.load(scratch + d), v128.load(scratchHigh + d)));
        out += 16;
      }
      if (++rowInBlock == rowDim) {
        rowInBlock = 0;
        bitShift += bits;
      }
    }
    column++;
  }
}

/**
 * Moves one quad's parameters between the library's column order and the quad scratch. The scratch
 * holds scale (and shift) of block t, channels 4c … 4c+3, as one vector at `base + c·64 + t·16`, so the
 * code loops read them with constant offsets. Channel c of block t in the library's column order is
 * `(c·A + a + t)`.
 */
// @ts-ignore: decorator
@inline function moveQuadParams(
  channels: u32, blocks: u32, column: u32, quadScale: u32, quadShift: u32, scale: u32, shift: u32, toLibrary: bool,
): void {
  let arr = column * 4;
  for (let c: u32 = 0; c < channels; c++) {
    const q = ((c >> 2) << 6) + ((c & 3) << 2);
    if (toLibrary) {
      for (let t: u32 = 0; t < 4; t++) {
        store<f32>(scale + arr + 4 * t, load<f32>(quadScale + q + 16 * t));
        store<f32>(shift + arr + 4 * t, load<f32>(quadShift + q + 16 * t));
      }
    } else {
      for (let t: u32 = 0; t < 4; t++) {
        store<f32>(quadScale + q + 16 * t, load<f32>(scale + arr + 4 * t));
        store<f32>(quadShift + q + 16 * t, load<f32>(shift + arr + 4 * t));
      }
    }
    arr += blocks * 4;
  }
}

/**
 * Axis −1 quantize, four token blocks at a time (the chunk holds 4·quadCount blocks from block a0).
 * Per block: per-channel min/max keys over its g rows, then scale/shift into the quad scratch. Then,
 * per packed row r and 4 channels, the codes of all rows r + i·rowDim of the four blocks are OR-ed
 * into one transposed 16-byte vector and written as four whole i32 words: no read-modify-write.
 */
function quantizeColumnQuadsOf<T>(
  x: u32, quadCount: u32, a0: u32, g: u32, channels: u32, blocks: u32, qmax: u32, bits: u32,
  rowDim: u32, packed: u32, scaleOut: u32, shiftOut: u32, scratch: u32,
): i32 {
  const qf = f32x4.splat(<f32>qmax);
  const rowBytes = channels * 4;
  const blockBytes = rowBytes * g;
  const block2 = blockBytes * 2;
  const block3 = blockBytes * 3;
  const stepBytes = rowBytes * rowDim;
  const maxKeys = scratch + rowBytes;
  const quadScale = maxKeys + rowBytes;
  const quadShift = quadScale + rowBytes * 4;
  const cols = channels * blocks;
  let column = a0;
  let flag = 0;
  for (let quad: u32 = 0; quad < quadCount; quad++) {
    let blockX = x;
    for (let t: u32 = 0; t < 4; t++) {
      flag |= blockParams<T>(blockX, g, rowBytes, scratch, maxKeys, qf);
      // block t's scale and shift into the quad scratch at c·64 + t·16
      for (let d: u32 = 0; d < rowBytes; d += 16) {
        const q = (d << 2) + (t << 4);
        v128.store(quadScale + q, v128.load(scratch + d));
        v128.store(quadShift + q, v128.load(maxKeys + d));
      }
      blockX += blockBytes;
    }
    moveQuadParams(channels, blocks, column, quadScale, quadShift, scaleOut, shiftOut, true);
    // codes, one packed row at a time
    for (let pr: u32 = 0; pr < rowDim; pr++) {
      let dst = packed + pr * cols + column;
      for (let d: u32 = 0; d < rowBytes; d += 16) {
        let acc = i32x4.splat(0);
        let bitShift: u32 = 0;
        let xj = x + pr * rowBytes + d;
        const sp = quadScale + (d << 2);
        const zp = quadShift + (d << 2);
        for (let j = pr; j < g; j += rowDim) {
          const c = narrowCodes(
            codes<T>(v128.load(xj), v128.load(zp), v128.load(sp), qf),
            codes<T>(v128.load(xj + blockBytes), v128.load(zp, 16), v128.load(sp, 16), qf),
            codes<T>(v128.load(xj + block2), v128.load(zp, 32), v128.load(sp, 32), qf),
            codes<T>(v128.load(xj + block3), v128.load(zp, 48), v128.load(sp, 48), qf),
          );
          acc = v128.or(acc, i8x16.shl(transpose4x4(c), bitShift));
          bitShift += bits;
          xj += stepBytes;
        }
        store<i32>(dst, i32x4.extract_lane(acc, 0));
        dst += blocks;
        store<i32>(dst, i32x4.extract_lane(acc, 1));
        dst += blocks;
        store<i32>(dst, i32x4.extract_lane(acc, 2));
        dst += blocks;
        store<i32>(dst, i32x4.extract_lane(acc, 3));
        dst += blocks;
      }
    }
    x = blockX;
    column += 4;
  }
  return flag;
}

/** Axis −1 dequantize, four token blocks at a time: the inverse walk of quantizeColumnQuads. */
function dequantizeColumnQuadsOf<T>(
  packed: u32, quadCount: u32, a0: u32, g: u32, channels: u32, blocks: u32, rowDim: u32, bits: u32,
  mask: u32, scale: u32, shift: u32, scratch: u32, out: u32,
): void {
  const vm = i8x16.splat(<i8>mask);
  const rowBytes = channels * 4;
  const blockBytes = rowBytes * g;
  const block2 = blockBytes * 2;
  const block3 = blockBytes * 3;
  const stepBytes = rowBytes * rowDim;
  const quadShift = scratch + rowBytes * 4;
  const cols = channels * blocks;
  let column = a0;
  for (let quad: u32 = 0; quad < quadCount; quad++) {
    moveQuadParams(channels, blocks, column, scratch, quadShift, scale, shift, false);
    for (let pr: u32 = 0; pr < rowDim; pr++) {
      let src = packed + pr * cols + column;
      for (let d: u32 = 0; d < rowBytes; d += 16) {
        let w = i32x4.splat(load<i32>(src));
        src += blocks;
        w = i32x4.replace_lane(w, 1, load<i32>(src));
        src += blocks;
        w = i32x4.replace_lane(w, 2, load<i32>(src));
        src += blocks;
        w = i32x4.replace_lane(w, 3, load<i32>(src));
        src += blocks;
        w = transpose4x4(w);
        let bitShift: u32 = 0;
        let outj = out + pr * rowBytes + d;
        const sp = scratch + (d << 2);
        const zp = quadShift + (d << 2);
        for (let j = pr; j < g; j += rowDim) {
          const b = v128.and(i8x16.shr_u(w, bitShift), vm);
          let h = i16x8.extend_low_i8x16_u(b);
          v128.store(outj, value<T>(i32x4.extend_low_i16x8_u(h), v128.load(sp), v128.load(zp)));
          v128.store(outj + blockBytes, value<T>(i32x4.extend_high_i16x8_u(h), v128.load(sp, 16), v128.load(zp, 16)));
          h = i16x8.extend_high_i8x16_u(b);
          v128.store(outj + block2, value<T>(i32x4.extend_low_i16x8_u(h), v128.load(sp, 32), v128.load(zp, 32)));
          v128.store(outj + block3, value<T>(i32x4.extend_high_i16x8_u(h), v128.load(sp, 48), v128.load(zp, 48)));
          bitShift += bits;
          outj += stepBytes;
        }
      }
    }
    out += block3 + blockBytes;
    column += 4;
  }
}

// The exports: float32 (f32) and float16 (u16, binary16's storage) variants of each kernel.

export function quantizeRows(x: u32, groups: u32, g: u32, qmax: u32, bitShift: u32, dst: u32, scale: u32, shift: u32): i32 {
  return quantizeRowsOf<f32>(x, groups, g, qmax, bitShift, dst, scale, shift);
}
export function quantizeRowsHalf(x: u32, groups: u32, g: u32, qmax: u32, bitShift: u32, dst: u32, scale: u32, shift: u32): i32 {
  return quantizeRowsOf<u16>(x, groups, g, qmax, bitShift, dst, scale, shift);
}
export function quantizeColumns(
  x: u32, blockCount: u32, a0: u32, g: u32, channels: u32, blocks: u32, qmax: u32, bits: u32,
  rowDim: u32, packed: u32, scale: u32, shift: u32, scratch: u32,
): i32 {
  return quantizeColumnsOf<f32>(x, blockCount, a0, g, channels, blocks, qmax, bits, rowDim, packed, scale, shift, scratch);
}
export function quantizeColumnsHalf(
  x: u32, blockCount: u32, a0: u32, g: u32, channels: u32, blocks: u32, qmax: u32, bits: u32,
  rowDim: u32, packed: u32, scale: u32, shift: u32, scratch: u32,
): i32 {
  return quantizeColumnsOf<u16>(x, blockCount, a0, g, channels, blocks, qmax, bits, rowDim, packed, scale, shift, scratch);
}
export function quantizeColumnQuads(
  x: u32, quadCount: u32, a0: u32, g: u32, channels: u32, blocks: u32, qmax: u32, bits: u32,
  rowDim: u32, packed: u32, scale: u32, shift: u32, scratch: u32,
): i32 {
  return quantizeColumnQuadsOf<f32>(x, quadCount, a0, g, channels, blocks, qmax, bits, rowDim, packed, scale, shift, scratch);
}
export function quantizeColumnQuadsHalf(
  x: u32, quadCount: u32, a0: u32, g: u32, channels: u32, blocks: u32, qmax: u32, bits: u32,
  rowDim: u32, packed: u32, scale: u32, shift: u32, scratch: u32,
): i32 {
  return quantizeColumnQuadsOf<u16>(x, quadCount, a0, g, channels, blocks, qmax, bits, rowDim, packed, scale, shift, scratch);
}
export function dequantizeRows(packed: u32, groups: u32, g: u32, bitShift: u32, mask: u32, scale: u32, shift: u32, out: u32): void {
  dequantizeRowsOf<f32>(packed, groups, g, bitShift, mask, scale, shift, out);
}
export function dequantizeRowsHalf(packed: u32, groups: u32, g: u32, bitShift: u32, mask: u32, scale: u32, shift: u32, out: u32): void {
  dequantizeRowsOf<u16>(packed, groups, g, bitShift, mask, scale, shift, out);
}
export function dequantizeColumns(
  packed: u32, blockCount: u32, a0: u32, g: u32, channels: u32, blocks: u32, rowDim: u32, bits: u32,
  mask: u32, scale: u32, shift: u32, scratch: u32, out: u32,
): void {
  dequantizeColumnsOf<f32>(packed, blockCount, a0, g, channels, blocks, rowDim, bits, mask, scale, shift, scratch, out);
}
export function dequantizeColumnsHalf(
  packed: u32, blockCount: u32, a0: u32, g: u32, channels: u32, blocks: u32, rowDim: u32, bits: u32,
  mask: u32, scale: u32, shift: u32, scratch: u32, out: u32,
): void {
  dequantizeColumnsOf<u16>(packed, blockCount, a0, g, channels, blocks, rowDim, bits, mask, scale, shift, scratch, out);
}
export function dequantizeColumnQuads(
  packed: u32, quadCount: u32, a0: u32, g: u32, channels: u32, blocks: u32, rowDim: u32, bits: u32,
  mask: u32, scale: u32, shift: u32, scratch: u32, out: u32,
): void {
  dequantizeColumnQuadsOf<f32>(packed, quadCount, a0, g, channels, blocks, rowDim, bits, mask, scale, shift, scratch, out);
}
export function dequantizeColumnQuadsHalf(
  packed: u32, quadCount: u32, a0: u32, g: u32, channels: u32, blocks: u32, rowDim: u32, bits: u32,
  mask: u32, scale: u32, shift: u32, scratch: u32, out: u32,
): void {
  dequantizeColumnQuadsOf<u16>(packed, quadCount, a0, g, channels, blocks, rowDim, bits, mask, scale, shift, scratch, out);
}
