import {
  addTo, assembleModule, f32, forRange, i32, localRange, op, repeat, v128, vop, type Code, type ValueType, type WasmFunction,
} from './wasm-assembler.js';

/**
 * 4×4 byte transpose: `[t0: d0 d1 d2 d3 | t1: … | t3: …]` ↔ `[d0: t0 t1 t2 t3 | d1: … | d3: …]`.
 * In the axis −1 packing, the bytes of four consecutive token blocks of one channel are adjacent
 * (`packed[r, d·A + a … d·A + a + 3]`), so after this transpose a whole i32 moves at once.
 * (Declared before the module is assembled below, which reads it.)
 */
const TRANSPOSE_4X4 = [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15];

/**
 * The float32 quanto kernels as WebAssembly SIMD (spec §3.1 steps 2–5). WebAssembly's f32x4 add, sub,
 * mul and div are IEEE binary32 operations rounded to nearest-even, so each lane computes exactly
 * what torch computes on CPU in float32: no emulation needed.
 *
 * Pointers and sizes are byte offsets into the module's memory, laid out by simd-runtime.ts. Each
 * quantize kernel returns 1 when a group's min or max is NaN or ±Inf.
 *
 * - quantizeRows (axis 0, g a multiple of 16): per group, min/max, scale and shift, then 16 codes
 *   at a time narrowed to bytes, shifted into their bit slot and OR-ed into the packed row.
 * - quantizeColumnQuads (axis −1, D a multiple of 4): four token blocks at a time; per block the
 *   per-channel min/max over its g rows, then whole packed i32 words via a 4×4 byte transpose.
 *   quantizeColumns does the same one block at a time, for the last A mod 4 blocks.
 * - dequantizeRows / dequantizeColumnQuads / dequantizeColumns: unpack, `scale·q − shift` in f32x4,
 *   ungroup into memory order.
 */
export const SIMD_KERNELS_MODULE: Uint8Array = assembleModule(
  (['float32', 'float16'] as const).flatMap((dtype) => [
    quantizeRows(dtype), quantizeColumns(dtype), quantizeColumnQuads(dtype),
    dequantizeRows(dtype), dequantizeColumns(dtype), dequantizeColumnQuads(dtype),
  ]),
  1,
);

type KernelDtype = 'float32' | 'float16';

/** Export name of a kernel: float16 variants end in "Half". */
export function kernelName(base: string, dtype: KernelDtype): string {
  return dtype === 'float16' ? `${base}Half` : base;
}

/**
 * What follows every f32x4 arithmetic result of a kernel: nothing for float32; for float16, a
 * rounding to binary16, as torch rounds each op in half (spec §3.4). A half op computed in f32 and
 * then rounded to half is exact (double rounding is innocuous: 24 ≥ 2·11 + 2), so this reproduces
 * half arithmetic. The rounding mirrors half-rounding.ts: integer round-to-nearest-even of the
 * mantissa to 10 bits, ±Inf above 65504 (NaN stays NaN), and `(|x| + 0.5) − 0.5` for subnormals.
 */
interface Rounding {
  readonly locals: readonly ValueType[];
  readonly init: readonly Code[];
  readonly round: readonly Code[];
}

function roundingFor(dtype: KernelDtype, firstLocal: number): Rounding {
  if (dtype === 'float32') return { locals: [], init: [], round: [] };
  const [x, r, one, bias, mask, abs, halfMax, minNormal, sign, inf, half] = localRange(firstLocal, 11);
  const splat = (value: number, local: number): Code[] => [op.i32Const(value | 0), vop.i32x4Splat, op.localSet(local)];
  return {
    locals: Array<ValueType>(11).fill(v128),
    init: [
      ...splat(1, one), ...splat(0xfff, bias), ...splat(0xffffe000, mask), ...splat(0x7fffffff, abs),
      ...splat(0x477fe000, halfMax), ...splat(0x38800000, minNormal), ...splat(0x80000000, sign), ...splat(0x7f800000, inf),
      op.f32Const(0.5), vop.f32x4Splat, op.localSet(half),
    ],
    round: [
      op.localSet(x),
      // normal range: bits + 0xfff + lsb, low 13 bits cleared
      op.localGet(x), op.localGet(x), op.i32Const(13), vop.i32x4ShrU, op.localGet(one), vop.and, vop.i32x4Add,
      op.localGet(bias), vop.i32x4Add, op.localGet(mask), vop.and, op.localSet(r),
      // above 65504 (and not NaN): ±Inf
      op.localGet(x), op.localGet(sign), vop.and, op.localGet(inf), vop.or,
      op.localGet(r),
      op.localGet(r), op.localGet(abs), vop.and, op.localGet(halfMax), vop.i32x4GtS,
      op.localGet(x), op.localGet(x), vop.f32x4Eq, vop.and,
      vop.bitselect, op.localSet(r),
      // below 2^-14: multiples of 2^-24, with x's sign
      op.localGet(x), op.localGet(abs), vop.and, op.localGet(half), vop.f32x4Add, op.localGet(half), vop.f32x4Sub,
      op.localGet(x), op.localGet(sign), vop.and, vop.or,
      op.localGet(r),
      op.localGet(x), op.localGet(abs), vop.and, op.localGet(minNormal), vop.i32x4LtS,
      vop.bitselect,
    ],
  };
}

/**
 * Per-quad parameter scratch: scale (and shift) of block t, channels 4c … 4c+3, as one vector at
 * `base + c·64 + t·16`, so the code loops read them with constant offsets. Channel c of block t in the
 * library's column order is `(c·A + a + t)`; these loops move parameters between the two layouts.
 */
function moveQuadParams(
  locals: { c: number; q: number; arr: number; channels: number; blocks: number; column: number },
  quadScale: number, quadShift: number, scale: number, shift: number, toLibrary: boolean,
): Code[] {
  const { c, q, arr, channels, blocks, column } = locals;
  const move = (t: number): Code[] =>
    toLibrary
      ? [
        ...at(scale, arr), ...at(quadScale, q), op.f32Load(16 * t), op.f32Store(4 * t),
        ...at(shift, arr), ...at(quadShift, q), op.f32Load(16 * t), op.f32Store(4 * t),
      ]
      : [
        ...at(quadScale, q), ...at(scale, arr), op.f32Load(4 * t), op.f32Store(16 * t),
        ...at(quadShift, q), ...at(shift, arr), op.f32Load(4 * t), op.f32Store(16 * t),
      ];
  return [
    op.localGet(column), op.i32Const(4), op.i32Mul, op.localSet(arr),
    op.i32Const(0), op.localSet(c),
    ...forRange(c, channels, 1, [
      // q = (c >> 2)·64 + (c & 3)·4
      op.localGet(c), op.i32Const(2), op.i32ShrU, op.i32Const(6), op.i32Shl,
      op.localGet(c), op.i32Const(3), op.i32And, op.i32Const(2), op.i32Shl, op.i32Add, op.localSet(q),
      ...move(0), ...move(1), ...move(2), ...move(3),
      ...addTo(arr, [...op.localGet(blocks), ...op.i32Const(4), ...op.i32Mul]),
    ]),
  ];
}

function at(base: number, offset: number): Code[] {
  return [op.localGet(base), op.localGet(offset), op.i32Add];
}

/**
 * Codes as i32 lanes: `q = (v + shift) / scale` in f32, then `min(q, qmax)` (pmin keeps a NaN), then
 * `q + 2^23`, whose f32 addition rounds q to an integer half-to-even and leaves it in the low mantissa
 * bits, masked out with 0xff. Rounding after clamping gives the library's `clamp(round(q))`: any q above
 * qmax rounds to at least qmax. NaN (a zero-range group: 0 / 0) is a canonical NaN whose low bits are 0,
 * the code torch's uint8 cast gave; +Inf (a scale rounded to 0) clamps to qmax, as torch.clamp does.
 */
function codes(value: readonly Code[], shift: readonly Code[], scale: readonly Code[], constants: CodeConstants, rounding: Rounding): Code[] {
  return [
    ...value, ...shift, vop.f32x4Add, ...rounding.round, ...scale, vop.f32x4Div, ...rounding.round,
    op.localGet(constants.qmax), vop.f32x4Pmin,
    op.localGet(constants.roundingMagic), vop.f32x4Add,
    op.localGet(constants.lowByte), vop.and,
  ];
}

/** v128 locals holding f32x4(qmax), f32x4(2^23) and i32x4(0xff) */
interface CodeConstants { readonly qmax: number; readonly roundingMagic: number; readonly lowByte: number }

function setCodeConstants(qmaxParam: number, constants: CodeConstants): Code[] {
  return [
    op.localGet(qmaxParam), op.f32ConvertI32U, vop.f32x4Splat, op.localSet(constants.qmax),
    op.f32Const(2 ** 23), vop.f32x4Splat, op.localSet(constants.roundingMagic),
    op.i32Const(0xff), vop.i32x4Splat, op.localSet(constants.lowByte),
  ];
}

/**
 * Min and max run on integer keys `bits ^ ((bits >> 31) >>> 1)`, which order floats like numbers,
 * with −0 below +0 (kvscope's convention, max-optimizer.ts) and NaN beyond ±Inf, so a NaN always ends
 * up as a group's min or max and is caught by the finiteness check. The map is its own inverse.
 * One i32x4 min/max each, where WebAssembly's NaN-propagating f32x4.min/max cost several instructions.
 */
function orderedKey(vector: readonly Code[]): Code[] {
  return [...vector, ...vector, op.i32Const(31), vop.i32x4ShrS, op.i32Const(1), vop.i32x4ShrU, vop.xor];
}

/** The f32 whose key is the min (or max) over the four lanes of a key vector. */
function horizontalKey(vector: number, reduce: Code, key: number): Code[] {
  return [
    op.localGet(vector), op.localGet(vector), op.localGet(vector),
    vop.i8x16Shuffle([8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7]), reduce,
    op.localTee(vector), op.localGet(vector), op.localGet(vector), vop.i8x16Shuffle([4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11]), reduce,
    vop.i32x4ExtractLane(0), op.localTee(key),
    op.localGet(key), op.i32Const(31), op.i32ShrS, op.i32Const(1), op.i32ShrU, op.i32Xor,
    op.f32ReinterpretI32,
  ];
}

/** `(hi − hi) + (lo − lo)` is NaN exactly when lo or hi is NaN or ±Inf. */
function nonFinite(lo: Code[], hi: Code[], sub: Code, add: Code): Code[] {
  return [...hi, ...hi, sub, ...lo, ...lo, sub, add];
}

function quantizeRows(dtype: KernelDtype): WasmFunction {
  const [x, groups, g, qmax, bitShift, dst, scaleOut, shiftOut] = [0, 1, 2, 3, 4, 5, 6, 7];
  const [r, p, end, flag, key] = [8, 9, 10, 11, 12];
  const [lo, hi, s] = [13, 14, 15];
  const [keyMin, keyMax, vs, vz, v] = [16, 17, 18, 19, 20];
  const constants: CodeConstants = { qmax: 21, roundingMagic: 22, lowByte: 23 };
  const rounding = roundingFor(dtype, 24);
  const code = (offset: number): Code[] =>
    codes([op.localGet(p), vop.load(offset)], [op.localGet(vz)], [op.localGet(vs)], constants, rounding);
  return {
    name: kernelName('quantizeRows', dtype),
    params: [i32, i32, i32, i32, i32, i32, i32, i32],
    results: [i32],
    locals: [i32, i32, i32, i32, i32, f32, f32, f32, v128, v128, v128, v128, v128, v128, v128, v128, ...rounding.locals],
    body: [
      ...rounding.init,
      ...setCodeConstants(qmax, constants),
      ...forRange(r, groups, 1, [
        op.localGet(x), op.localGet(g), op.i32Const(4), op.i32Mul, op.i32Add, op.localSet(end),
        op.localGet(x), vop.load(), op.localSet(v),
        ...orderedKey([op.localGet(v)]), op.localTee(keyMin), op.localSet(keyMax),
        op.localGet(x), op.i32Const(16), op.i32Add, op.localSet(p),
        ...forRange(p, end, 16, [
          op.localGet(p), vop.load(), op.localSet(v),
          ...orderedKey([op.localGet(v)]), op.localSet(v),
          op.localGet(keyMin), op.localGet(v), vop.i32x4MinS, op.localSet(keyMin),
          op.localGet(keyMax), op.localGet(v), vop.i32x4MaxS, op.localSet(keyMax),
        ]),
        ...horizontalKey(keyMin, vop.i32x4MinS, key), op.localSet(lo),
        ...horizontalKey(keyMax, vop.i32x4MaxS, key), op.localSet(hi),
        ...nonFinite([op.localGet(lo)], [op.localGet(hi)], op.f32Sub, op.f32Add), op.localTee(s), op.localGet(s), op.f32Ne,
        op.localGet(flag), op.i32Or, op.localSet(flag),
        // MaxOptimizer in T: scale = (max − min) / qmax, shift = −min (splatted: the codes need vectors anyway)
        op.localGet(hi), vop.f32x4Splat, op.localGet(lo), vop.f32x4Splat, vop.f32x4Sub, ...rounding.round,
        op.localGet(constants.qmax), vop.f32x4Div, ...rounding.round, op.localSet(vs),
        op.localGet(lo), vop.f32x4Splat, vop.f32x4Neg, op.localSet(vz),
        op.localGet(scaleOut), op.localGet(vs), vop.f32x4ExtractLane(0), op.f32Store(),
        op.localGet(shiftOut), op.localGet(vz), vop.f32x4ExtractLane(0), op.f32Store(),
        op.localGet(x), op.localSet(p),
        ...forRange(p, end, 64, [
          op.localGet(dst),
          op.localGet(dst), vop.load(),
          ...code(0), ...code(16), vop.i16x8NarrowI32x4S,
          ...code(32), ...code(48), vop.i16x8NarrowI32x4S,
          vop.i8x16NarrowI16x8U,
          op.localGet(bitShift), vop.i8x16Shl,
          vop.or, vop.store(),
          ...addTo(dst, op.i32Const(16)),
        ]),
        op.localGet(end), op.localSet(x),
        ...addTo(scaleOut, op.i32Const(4)),
        ...addTo(shiftOut, op.i32Const(4)),
      ]),
      op.localGet(flag),
    ],
  };
}

function quantizeColumns(dtype: KernelDtype): WasmFunction {
  const [x, blockCount, a0, g, channels, blocks, qmax, bits, rowDim, packed, scaleOut, shiftOut, scratch] =
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
  const [a, j, d, rowBytes, row, p, flag, rowInBlock, bitShift, dst, cols, column, scratchHigh] =
    [13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25];
  const [v, lo, hi, c, qf] = [26, 27, 28, 29, 30];
  const constants: CodeConstants = { qmax: 31, roundingMagic: 32, lowByte: 33 };
  const rounding = roundingFor(dtype, 34);
  const orLane = (lane: number): Code[] => [
    op.localGet(dst), op.localGet(dst), op.i32Load8U(), op.localGet(c), vop.i32x4ExtractLane(lane), op.i32Or, op.i32Store8(),
    ...addTo(dst, op.localGet(blocks)),
  ];
  return {
    name: kernelName('quantizeColumns', dtype),
    params: [i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32],
    results: [i32],
    locals: [i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, v128, v128, v128, v128, v128, v128, v128, v128, ...rounding.locals],
    body: [
      ...rounding.init,
      ...setCodeConstants(qmax, constants),
      op.localGet(qmax), op.f32ConvertI32U, vop.f32x4Splat, op.localSet(qf),
      op.localGet(channels), op.i32Const(4), op.i32Mul, op.localSet(rowBytes),
      op.localGet(scratch), op.localGet(rowBytes), op.i32Add, op.localSet(scratchHigh),
      op.localGet(channels), op.localGet(blocks), op.i32Mul, op.localSet(cols),
      op.localGet(a0), op.localSet(column),
      ...forRange(a, blockCount, 1, [
        // per-channel min key (scratch) and max key (scratchHigh) over the block's g rows
        op.i32Const(0), op.localSet(d),
        ...forRange(d, rowBytes, 16, [
          ...at(x, d), vop.load(), op.localSet(v),
          ...orderedKey([op.localGet(v)]), op.localSet(v),
          ...at(scratch, d), op.localGet(v), vop.store(),
          ...at(scratchHigh, d), op.localGet(v), vop.store(),
        ]),
        op.localGet(x), op.localGet(rowBytes), op.i32Add, op.localSet(row),
        op.i32Const(1), op.localSet(j),
        ...forRange(j, g, 1, [
          op.i32Const(0), op.localSet(d),
          ...forRange(d, rowBytes, 16, [
            ...at(row, d), vop.load(), op.localSet(v),
            ...orderedKey([op.localGet(v)]), op.localSet(v),
            ...at(scratch, d), ...at(scratch, d), vop.load(), op.localGet(v), vop.i32x4MinS, vop.store(),
            ...at(scratchHigh, d), ...at(scratchHigh, d), vop.load(), op.localGet(v), vop.i32x4MaxS, vop.store(),
          ]),
          ...addTo(row, op.localGet(rowBytes)),
        ]),
        // MaxOptimizer per channel, in place: scratch ← scale, scratchHigh ← shift
        op.i32Const(0), op.localSet(d),
        ...forRange(d, rowBytes, 16, [
          ...orderedKey([...at(scratch, d), vop.load()]), op.localSet(lo),
          ...orderedKey([...at(scratchHigh, d), vop.load()]), op.localSet(hi),
          ...nonFinite([op.localGet(lo)], [op.localGet(hi)], vop.f32x4Sub, vop.f32x4Add), op.localTee(v), op.localGet(v), vop.f32x4Ne,
          vop.anyTrue, op.localGet(flag), op.i32Or, op.localSet(flag),
          ...at(scratch, d), op.localGet(hi), op.localGet(lo), vop.f32x4Sub, ...rounding.round, op.localGet(qf), vop.f32x4Div,
          ...rounding.round, vop.store(),
          ...at(scratchHigh, d), op.localGet(lo), vop.f32x4Neg, vop.store(),
        ]),
        // scale/shift of channel d go to column d·A + a
        op.localGet(column), op.i32Const(4), op.i32Mul, op.localSet(p),
        op.i32Const(0), op.localSet(d),
        ...forRange(d, rowBytes, 4, [
          ...at(scaleOut, p), ...at(scratch, d), op.f32Load(), op.f32Store(),
          ...at(shiftOut, p), ...at(scratchHigh, d), op.f32Load(), op.f32Store(),
          ...addTo(p, [...op.localGet(blocks), ...op.i32Const(4), ...op.i32Mul]),
        ]),
        // codes: row j of the block goes to packed row j mod rowDim, bit slot bits·⌊j / rowDim⌋
        op.i32Const(0), op.localSet(rowInBlock),
        op.i32Const(0), op.localSet(bitShift),
        op.localGet(x), op.localSet(row),
        op.i32Const(0), op.localSet(j),
        ...forRange(j, g, 1, [
          op.localGet(packed), op.localGet(rowInBlock), op.localGet(cols), op.i32Mul, op.i32Add, op.localGet(column), op.i32Add,
          op.localSet(dst),
          op.i32Const(0), op.localSet(d),
          ...forRange(d, rowBytes, 16, [
            ...codes([...at(row, d), vop.load()], [...at(scratchHigh, d), vop.load()], [...at(scratch, d), vop.load()], constants, rounding),
            op.localGet(bitShift), vop.i32x4Shl, op.localSet(c),
            ...orLane(0), ...orLane(1), ...orLane(2), ...orLane(3),
          ]),
          ...addTo(row, op.localGet(rowBytes)),
          ...addTo(rowInBlock, op.i32Const(1)),
          op.localGet(rowInBlock), op.localGet(rowDim), op.i32Eq, op.if,
          op.i32Const(0), op.localSet(rowInBlock),
          ...addTo(bitShift, op.localGet(bits)),
          op.end,
        ]),
        op.localGet(row), op.localSet(x),
        ...addTo(column, op.i32Const(1)),
      ]),
      op.localGet(flag),
    ],
  };
}

function dequantizeRows(dtype: KernelDtype): WasmFunction {
  const [packed, groups, g, bitShift, mask, scale, shift, out] = [0, 1, 2, 3, 4, 5, 6, 7];
  const [r, end] = [8, 9];
  const [vs, vz, vm, b, h] = [10, 11, 12, 13, 14];
  const rounding = roundingFor(dtype, 15);
  const value = (widen: Code, offset: number): Code[] => [
    op.localGet(out), op.localGet(h), widen, vop.f32x4ConvertI32x4S,
    op.localGet(vs), vop.f32x4Mul, ...rounding.round, op.localGet(vz), vop.f32x4Sub, ...rounding.round, vop.store(offset),
  ];
  return {
    name: kernelName('dequantizeRows', dtype),
    params: [i32, i32, i32, i32, i32, i32, i32, i32],
    results: [],
    locals: [i32, i32, v128, v128, v128, v128, v128, ...rounding.locals],
    body: [
      ...rounding.init,
      op.localGet(mask), vop.i8x16Splat, op.localSet(vm),
      ...forRange(r, groups, 1, [
        op.localGet(scale), op.f32Load(), vop.f32x4Splat, op.localSet(vs),
        op.localGet(shift), op.f32Load(), vop.f32x4Splat, op.localSet(vz),
        op.localGet(packed), op.localGet(g), op.i32Add, op.localSet(end),
        ...forRange(packed, end, 16, [
          op.localGet(packed), vop.load(), op.localGet(bitShift), vop.i8x16ShrU, op.localGet(vm), vop.and, op.localSet(b),
          op.localGet(b), vop.i16x8ExtendLowI8x16U, op.localSet(h),
          ...value(vop.i32x4ExtendLowI16x8U, 0), ...value(vop.i32x4ExtendHighI16x8U, 16),
          op.localGet(b), vop.i16x8ExtendHighI8x16U, op.localSet(h),
          ...value(vop.i32x4ExtendLowI16x8U, 32), ...value(vop.i32x4ExtendHighI16x8U, 48),
          ...addTo(out, op.i32Const(64)),
        ]),
        ...addTo(scale, op.i32Const(4)),
        ...addTo(shift, op.i32Const(4)),
      ]),
    ],
  };
}

function dequantizeColumns(dtype: KernelDtype): WasmFunction {
  const [packed, blockCount, a0, g, channels, blocks, rowDim, bits, mask, scale, shift, scratch, out] =
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
  const [a, j, d, rowBytes, p, rowInBlock, bitShift, src, cols, column, scratchHigh] =
    [13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23];
  const [q, vm] = [24, 25];
  const rounding = roundingFor(dtype, 26);
  const nextByte: Code[] = [op.localGet(src), op.i32Load8U(), ...addTo(src, op.localGet(blocks))];
  return {
    name: kernelName('dequantizeColumns', dtype),
    params: [i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32],
    results: [],
    locals: [i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, v128, v128, ...rounding.locals],
    body: [
      ...rounding.init,
      op.localGet(mask), vop.i32x4Splat, op.localSet(vm),
      op.localGet(channels), op.i32Const(4), op.i32Mul, op.localSet(rowBytes),
      op.localGet(scratch), op.localGet(rowBytes), op.i32Add, op.localSet(scratchHigh),
      op.localGet(channels), op.localGet(blocks), op.i32Mul, op.localSet(cols),
      op.localGet(a0), op.localSet(column),
      ...forRange(a, blockCount, 1, [
        // gather this block's per-channel scale and shift (columns d·A + a) into scratch
        op.localGet(column), op.i32Const(4), op.i32Mul, op.localSet(p),
        op.i32Const(0), op.localSet(d),
        ...forRange(d, rowBytes, 4, [
          ...at(scratch, d), ...at(scale, p), op.f32Load(), op.f32Store(),
          ...at(scratchHigh, d), ...at(shift, p), op.f32Load(), op.f32Store(),
          ...addTo(p, [...op.localGet(blocks), ...op.i32Const(4), ...op.i32Mul]),
        ]),
        op.i32Const(0), op.localSet(rowInBlock),
        op.i32Const(0), op.localSet(bitShift),
        op.i32Const(0), op.localSet(j),
        ...forRange(j, g, 1, [
          op.localGet(packed), op.localGet(rowInBlock), op.localGet(cols), op.i32Mul, op.i32Add, op.localGet(column), op.i32Add,
          op.localSet(src),
          op.i32Const(0), op.localSet(d),
          ...forRange(d, rowBytes, 16, [
            ...nextByte, vop.i32x4Splat,
            ...nextByte, vop.i32x4ReplaceLane(1),
            ...nextByte, vop.i32x4ReplaceLane(2),
            ...nextByte, vop.i32x4ReplaceLane(3),
            op.localGet(bitShift), vop.i32x4ShrU, op.localGet(vm), vop.and, op.localSet(q),
            op.localGet(out),
            op.localGet(q), vop.f32x4ConvertI32x4S, ...at(scratch, d), vop.load(), vop.f32x4Mul, ...rounding.round,
            ...at(scratchHigh, d), vop.load(), vop.f32x4Sub, ...rounding.round,
            vop.store(),
            ...addTo(out, op.i32Const(16)),
          ]),
          ...addTo(rowInBlock, op.i32Const(1)),
          op.localGet(rowInBlock), op.localGet(rowDim), op.i32Eq, op.if,
          op.i32Const(0), op.localSet(rowInBlock),
          ...addTo(bitShift, op.localGet(bits)),
          op.end,
        ]),
        ...addTo(column, op.i32Const(1)),
      ]),
    ],
  };
}

/**
 * Axis −1 quantize, four token blocks at a time (the chunk holds 4·quadCount blocks from block a0).
 * Per block: per-channel min/max keys over its g rows, then scale/shift into the quad scratch. Then,
 * per packed row r and 4 channels, the codes of all rows r + i·rowDim of the four blocks are OR-ed
 * into one transposed 16-byte vector and written as four whole i32 words: no read-modify-write.
 */
function quantizeColumnQuads(dtype: KernelDtype): WasmFunction {
  const [x, quadCount, a0, g, channels, blocks, qmax, bits, rowDim, packed, scaleOut, shiftOut, scratch] =
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
  const [quad, t, j, d, rowBytes, blockBytes, row, flag, pr, bitShift, dst, cols, column, maxKeys, quadScale, quadShift] =
    [13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28];
  const [xj, stepBytes, c, q, arr, blockX, sp, zp, block2, block3] = [29, 30, 31, 32, 33, 34, 35, 36, 37, 38];
  const [v, lo, hi, acc, qf] = [39, 40, 41, 42, 43];
  const constants: CodeConstants = { qmax: 44, roundingMagic: 45, lowByte: 46 };
  const rounding = roundingFor(dtype, 47);
  const codeOf = (blockOffset: Code[], t4: number): Code[] => codes(
    [op.localGet(xj), ...blockOffset, vop.load()], [op.localGet(zp), vop.load(16 * t4)], [op.localGet(sp), vop.load(16 * t4)], constants, rounding,
  );
  const storeLane = (lane: number): Code[] => [
    op.localGet(dst), op.localGet(acc), vop.i32x4ExtractLane(lane), op.i32Store(), ...addTo(dst, op.localGet(blocks)),
  ];
  return {
    name: kernelName('quantizeColumnQuads', dtype),
    params: [i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32],
    results: [i32],
    locals: [...Array<ValueType>(26).fill(i32), ...Array<ValueType>(8).fill(v128), ...rounding.locals],
    body: [
      ...rounding.init,
      ...setCodeConstants(qmax, constants),
      op.localGet(qmax), op.f32ConvertI32U, vop.f32x4Splat, op.localSet(qf),
      op.localGet(channels), op.i32Const(4), op.i32Mul, op.localSet(rowBytes),
      op.localGet(rowBytes), op.localGet(g), op.i32Mul, op.localSet(blockBytes),
      op.localGet(blockBytes), op.i32Const(2), op.i32Mul, op.localSet(block2),
      op.localGet(blockBytes), op.i32Const(3), op.i32Mul, op.localSet(block3),
      op.localGet(rowBytes), op.localGet(rowDim), op.i32Mul, op.localSet(stepBytes),
      op.localGet(scratch), op.localGet(rowBytes), op.i32Add, op.localSet(maxKeys),
      op.localGet(maxKeys), op.localGet(rowBytes), op.i32Add, op.localSet(quadScale),
      op.localGet(quadScale), op.localGet(rowBytes), op.i32Const(4), op.i32Mul, op.i32Add, op.localSet(quadShift),
      op.localGet(channels), op.localGet(blocks), op.i32Mul, op.localSet(cols),
      op.localGet(a0), op.localSet(column),
      ...forRange(quad, quadCount, 1, [
        op.localGet(x), op.localSet(blockX),
        ...repeat(t, 4, [
          // min/max keys of block t over its g rows
          op.i32Const(0), op.localSet(d),
          ...forRange(d, rowBytes, 16, [
            ...orderedKey([...at(blockX, d), vop.load()]), op.localSet(v),
            ...at(scratch, d), op.localGet(v), vop.store(),
            ...at(maxKeys, d), op.localGet(v), vop.store(),
          ]),
          op.localGet(blockX), op.localGet(rowBytes), op.i32Add, op.localSet(row),
          op.i32Const(1), op.localSet(j),
          ...forRange(j, g, 1, [
            op.i32Const(0), op.localSet(d),
            ...forRange(d, rowBytes, 16, [
              ...orderedKey([...at(row, d), vop.load()]), op.localSet(v),
              ...at(scratch, d), ...at(scratch, d), vop.load(), op.localGet(v), vop.i32x4MinS, vop.store(),
              ...at(maxKeys, d), ...at(maxKeys, d), vop.load(), op.localGet(v), vop.i32x4MaxS, vop.store(),
            ]),
            ...addTo(row, op.localGet(rowBytes)),
          ]),
          // MaxOptimizer for block t, into the quad scratch at c·64 + t·16
          op.i32Const(0), op.localSet(d),
          ...forRange(d, rowBytes, 16, [
            ...orderedKey([...at(scratch, d), vop.load()]), op.localSet(lo),
            ...orderedKey([...at(maxKeys, d), vop.load()]), op.localSet(hi),
            ...nonFinite([op.localGet(lo)], [op.localGet(hi)], vop.f32x4Sub, vop.f32x4Add), op.localTee(v), op.localGet(v), vop.f32x4Ne,
            vop.anyTrue, op.localGet(flag), op.i32Or, op.localSet(flag),
            op.localGet(d), op.i32Const(2), op.i32Shl, op.localGet(t), op.i32Const(4), op.i32Shl, op.i32Add, op.localSet(q),
            ...at(quadScale, q), op.localGet(hi), op.localGet(lo), vop.f32x4Sub, ...rounding.round, op.localGet(qf), vop.f32x4Div,
            ...rounding.round, vop.store(),
            ...at(quadShift, q), op.localGet(lo), vop.f32x4Neg, vop.store(),
          ]),
          ...addTo(blockX, op.localGet(blockBytes)),
        ]),
        ...moveQuadParams({ c, q, arr, channels, blocks, column }, quadScale, quadShift, scaleOut, shiftOut, true),
        // codes, one packed row at a time
        op.i32Const(0), op.localSet(pr),
        ...forRange(pr, rowDim, 1, [
          op.localGet(packed), op.localGet(pr), op.localGet(cols), op.i32Mul, op.i32Add, op.localGet(column), op.i32Add, op.localSet(dst),
          op.i32Const(0), op.localSet(d),
          ...forRange(d, rowBytes, 16, [
            op.i32Const(0), vop.i32x4Splat, op.localSet(acc),
            op.localGet(pr), op.localSet(j),
            op.i32Const(0), op.localSet(bitShift),
            op.localGet(x), op.localGet(pr), op.localGet(rowBytes), op.i32Mul, op.i32Add, op.localGet(d), op.i32Add, op.localSet(xj),
            op.localGet(d), op.i32Const(2), op.i32Shl, op.localTee(sp), op.localGet(quadShift), op.i32Add, op.localSet(zp),
            ...addTo(sp, op.localGet(quadScale)),
            op.block, op.loop,
            op.localGet(j), op.localGet(g), op.i32GeU, op.brIf(1),
            op.localGet(acc),
            ...codeOf([], 0), ...codeOf([op.localGet(blockBytes), op.i32Add], 1), vop.i16x8NarrowI32x4S,
            ...codeOf([op.localGet(block2), op.i32Add], 2), ...codeOf([op.localGet(block3), op.i32Add], 3), vop.i16x8NarrowI32x4S,
            vop.i8x16NarrowI16x8U,
            op.localTee(v), op.localGet(v), vop.i8x16Shuffle(TRANSPOSE_4X4),
            op.localGet(bitShift), vop.i8x16Shl,
            vop.or, op.localSet(acc),
            ...addTo(j, op.localGet(rowDim)),
            ...addTo(bitShift, op.localGet(bits)),
            ...addTo(xj, op.localGet(stepBytes)),
            op.br(0),
            op.end, op.end,
            ...storeLane(0), ...storeLane(1), ...storeLane(2), ...storeLane(3),
          ]),
        ]),
        op.localGet(blockX), op.localSet(x),
        ...addTo(column, op.i32Const(4)),
      ]),
      op.localGet(flag),
    ],
  };
}

/** Axis −1 dequantize, four token blocks at a time: the inverse walk of quantizeColumnQuads. */
function dequantizeColumnQuads(dtype: KernelDtype): WasmFunction {
  const [packed, quadCount, a0, g, channels, blocks, rowDim, bits, mask, scale, shift, scratch, out] =
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
  const [quad, j, d, rowBytes, blockBytes, pr, bitShift, src, cols, column, quadShift, outj, stepBytes, c, q, arr, sp, zp, block2, block3] =
    [13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32];
  const [w, b, h, vm] = [33, 34, 35, 36];
  const rounding = roundingFor(dtype, 37);
  const nextWord = (lane: number): Code[] => [
    op.localGet(src), op.i32Load(), lane === 0 ? vop.i32x4Splat : vop.i32x4ReplaceLane(lane), ...addTo(src, op.localGet(blocks)),
  ];
  const value = (widen: Code, t: number, blockOffset: Code[]): Code[] => [
    op.localGet(outj), ...blockOffset,
    op.localGet(h), widen, vop.f32x4ConvertI32x4S,
    op.localGet(sp), vop.load(16 * t), vop.f32x4Mul, ...rounding.round,
    op.localGet(zp), vop.load(16 * t), vop.f32x4Sub, ...rounding.round,
    vop.store(),
  ];
  return {
    name: kernelName('dequantizeColumnQuads', dtype),
    params: [i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32],
    results: [],
    locals: [...Array<ValueType>(20).fill(i32), ...Array<ValueType>(4).fill(v128), ...rounding.locals],
    body: [
      ...rounding.init,
      op.localGet(mask), vop.i8x16Splat, op.localSet(vm),
      op.localGet(channels), op.i32Const(4), op.i32Mul, op.localSet(rowBytes),
      op.localGet(rowBytes), op.localGet(g), op.i32Mul, op.localSet(blockBytes),
      op.localGet(blockBytes), op.i32Const(2), op.i32Mul, op.localSet(block2),
      op.localGet(blockBytes), op.i32Const(3), op.i32Mul, op.localSet(block3),
      op.localGet(rowBytes), op.localGet(rowDim), op.i32Mul, op.localSet(stepBytes),
      op.localGet(scratch), op.localGet(rowBytes), op.i32Const(4), op.i32Mul, op.i32Add, op.localSet(quadShift),
      op.localGet(channels), op.localGet(blocks), op.i32Mul, op.localSet(cols),
      op.localGet(a0), op.localSet(column),
      ...forRange(quad, quadCount, 1, [
        ...moveQuadParams({ c, q, arr, channels, blocks, column }, scratch, quadShift, scale, shift, false),
        op.i32Const(0), op.localSet(pr),
        ...forRange(pr, rowDim, 1, [
          op.localGet(packed), op.localGet(pr), op.localGet(cols), op.i32Mul, op.i32Add, op.localGet(column), op.i32Add, op.localSet(src),
          op.i32Const(0), op.localSet(d),
          ...forRange(d, rowBytes, 16, [
            ...nextWord(0), ...nextWord(1), ...nextWord(2), ...nextWord(3), op.localTee(w), op.localGet(w),
            vop.i8x16Shuffle(TRANSPOSE_4X4), op.localSet(w),
            op.localGet(pr), op.localSet(j),
            op.i32Const(0), op.localSet(bitShift),
            op.localGet(out), op.localGet(pr), op.localGet(rowBytes), op.i32Mul, op.i32Add, op.localGet(d), op.i32Add, op.localSet(outj),
            op.localGet(d), op.i32Const(2), op.i32Shl, op.localTee(sp), op.localGet(quadShift), op.i32Add, op.localSet(zp),
            ...addTo(sp, op.localGet(scratch)),
            op.block, op.loop,
            op.localGet(j), op.localGet(g), op.i32GeU, op.brIf(1),
            op.localGet(w), op.localGet(bitShift), vop.i8x16ShrU, op.localGet(vm), vop.and, op.localSet(b),
            op.localGet(b), vop.i16x8ExtendLowI8x16U, op.localSet(h),
            ...value(vop.i32x4ExtendLowI16x8U, 0, []),
            ...value(vop.i32x4ExtendHighI16x8U, 1, [op.localGet(blockBytes), op.i32Add]),
            op.localGet(b), vop.i16x8ExtendHighI8x16U, op.localSet(h),
            ...value(vop.i32x4ExtendLowI16x8U, 2, [op.localGet(block2), op.i32Add]),
            ...value(vop.i32x4ExtendHighI16x8U, 3, [op.localGet(block3), op.i32Add]),
            ...addTo(j, op.localGet(rowDim)),
            ...addTo(bitShift, op.localGet(bits)),
            ...addTo(outj, op.localGet(stepBytes)),
            op.br(0),
            op.end, op.end,
          ]),
        ]),
        op.localGet(out), op.localGet(block3), op.i32Add, op.localGet(blockBytes), op.i32Add, op.localSet(out),
        ...addTo(column, op.i32Const(4)),
      ]),
    ],
  };
}
