import { addTo, encodeModule, forRange, ins, repeat, ValType, type Code, type WasmFunction } from '../../../wasm/wasm-encoder.js';

type ValueType = ValType;
const { I32: i32, F32: f32, V128: v128 } = ValType;

/** `count` consecutive local indices from `first` */
function localRange(first: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => first + i);
}

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
export const SIMD_KERNELS_MODULE: Uint8Array = encodeModule(
  (['float32', 'float16'] as const).flatMap((dtype) => [
    quantizeRows(dtype), quantizeColumns(dtype), quantizeColumnQuads(dtype),
    dequantizeRows(dtype), dequantizeColumns(dtype), dequantizeColumnQuads(dtype),
  ]),
  { export: 'memory', pages: 1 },
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
 * half arithmetic. The rounding is app/tensor/float16.ts's roundToFloat16 on float32 values: integer
 * round-to-nearest-even of the mantissa to 10 bits, ±Inf above 65504 (NaN stays NaN), and, for
 * subnormals, `(|x| + 0.5) − 0.5` in f32 (exact there: 2^-24 is the f32 ulp of 0.5).
 */
interface Rounding {
  readonly locals: readonly ValueType[];
  readonly init: readonly Code[];
  readonly round: readonly Code[];
}

function roundingFor(dtype: KernelDtype, firstLocal: number): Rounding {
  if (dtype === 'float32') return { locals: [], init: [], round: [] };
  const [x, r, one, bias, mask, abs, halfMax, minNormal, sign, inf, half] = localRange(firstLocal, 11);
  const splat = (value: number, local: number): Code[] => [ins.i32Const(value | 0), ins.i32x4Splat, ins.localSet(local)];
  return {
    locals: Array<ValueType>(11).fill(v128),
    init: [
      ...splat(1, one), ...splat(0xfff, bias), ...splat(0xffffe000, mask), ...splat(0x7fffffff, abs),
      ...splat(0x477fe000, halfMax), ...splat(0x38800000, minNormal), ...splat(0x80000000, sign), ...splat(0x7f800000, inf),
      ins.f32Const(0.5), ins.f32x4Splat, ins.localSet(half),
    ],
    round: [
      ins.localSet(x),
      // normal range: bits + 0xfff + lsb, low 13 bits cleared
      ins.localGet(x), ins.localGet(x), ins.i32Const(13), ins.i32x4ShrU, ins.localGet(one), ins.v128And, ins.i32x4Add,
      ins.localGet(bias), ins.i32x4Add, ins.localGet(mask), ins.v128And, ins.localSet(r),
      // above 65504 (and not NaN): ±Inf
      ins.localGet(x), ins.localGet(sign), ins.v128And, ins.localGet(inf), ins.v128Or,
      ins.localGet(r),
      ins.localGet(r), ins.localGet(abs), ins.v128And, ins.localGet(halfMax), ins.i32x4GtS,
      ins.localGet(x), ins.localGet(x), ins.f32x4Eq, ins.v128And,
      ins.v128Bitselect, ins.localSet(r),
      // below 2^-14: multiples of 2^-24, with x's sign
      ins.localGet(x), ins.localGet(abs), ins.v128And, ins.localGet(half), ins.f32x4Add, ins.localGet(half), ins.f32x4Sub,
      ins.localGet(x), ins.localGet(sign), ins.v128And, ins.v128Or,
      ins.localGet(r),
      ins.localGet(x), ins.localGet(abs), ins.v128And, ins.localGet(minNormal), ins.i32x4LtS,
      ins.v128Bitselect,
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
        ...at(scale, arr), ...at(quadScale, q), ins.f32Load(16 * t), ins.f32Store(4 * t),
        ...at(shift, arr), ...at(quadShift, q), ins.f32Load(16 * t), ins.f32Store(4 * t),
      ]
      : [
        ...at(quadScale, q), ...at(scale, arr), ins.f32Load(4 * t), ins.f32Store(16 * t),
        ...at(quadShift, q), ...at(shift, arr), ins.f32Load(4 * t), ins.f32Store(16 * t),
      ];
  return [
    ins.localGet(column), ins.i32Const(4), ins.i32Mul, ins.localSet(arr),
    ins.i32Const(0), ins.localSet(c),
    ...forRange(c, channels, 1, [
      // q = (c >> 2)·64 + (c & 3)·4
      ins.localGet(c), ins.i32Const(2), ins.i32ShrU, ins.i32Const(6), ins.i32Shl,
      ins.localGet(c), ins.i32Const(3), ins.i32And, ins.i32Const(2), ins.i32Shl, ins.i32Add, ins.localSet(q),
      ...move(0), ...move(1), ...move(2), ...move(3),
      ...addTo(arr, [...ins.localGet(blocks), ...ins.i32Const(4), ...ins.i32Mul]),
    ]),
  ];
}

function at(base: number, offset: number): Code[] {
  return [ins.localGet(base), ins.localGet(offset), ins.i32Add];
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
    ...value, ...shift, ins.f32x4Add, ...rounding.round, ...scale, ins.f32x4Div, ...rounding.round,
    ins.localGet(constants.qmax), ins.f32x4Pmin,
    ins.localGet(constants.roundingMagic), ins.f32x4Add,
    ins.localGet(constants.lowByte), ins.v128And,
  ];
}

/** v128 locals holding f32x4(qmax), f32x4(2^23) and i32x4(0xff) */
interface CodeConstants { readonly qmax: number; readonly roundingMagic: number; readonly lowByte: number }

function setCodeConstants(qmaxParam: number, constants: CodeConstants): Code[] {
  return [
    ins.localGet(qmaxParam), ins.f32ConvertI32U, ins.f32x4Splat, ins.localSet(constants.qmax),
    ins.f32Const(2 ** 23), ins.f32x4Splat, ins.localSet(constants.roundingMagic),
    ins.i32Const(0xff), ins.i32x4Splat, ins.localSet(constants.lowByte),
  ];
}

/**
 * Min and max run on integer keys `bits ^ ((bits >> 31) >>> 1)`, which order floats like numbers,
 * with −0 below +0 (kvscope's convention, max-optimizer.ts) and NaN beyond ±Inf, so a NaN always ends
 * up as a group's min or max and is caught by the finiteness check. The map is its own inverse.
 * One i32x4 min/max each, where WebAssembly's NaN-propagating f32x4.min/max cost several instructions.
 */
function orderedKey(vector: readonly Code[]): Code[] {
  return [...vector, ...vector, ins.i32Const(31), ins.i32x4ShrS, ins.i32Const(1), ins.i32x4ShrU, ins.v128Xor];
}

/** The f32 whose key is the min (or max) over the four lanes of a key vector. */
function horizontalKey(vector: number, reduce: Code, key: number): Code[] {
  return [
    ins.localGet(vector), ins.localGet(vector), ins.localGet(vector),
    ins.i8x16Shuffle([8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7]), reduce,
    ins.localTee(vector), ins.localGet(vector), ins.localGet(vector), ins.i8x16Shuffle([4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11]), reduce,
    ins.i32x4ExtractLane(0), ins.localTee(key),
    ins.localGet(key), ins.i32Const(31), ins.i32ShrS, ins.i32Const(1), ins.i32ShrU, ins.i32Xor,
    ins.f32ReinterpretI32,
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
    codes([ins.localGet(p), ins.v128Load(offset)], [ins.localGet(vz)], [ins.localGet(vs)], constants, rounding);
  return {
    name: kernelName('quantizeRows', dtype),
    params: [i32, i32, i32, i32, i32, i32, i32, i32],
    results: [i32],
    locals: [i32, i32, i32, i32, i32, f32, f32, f32, v128, v128, v128, v128, v128, v128, v128, v128, ...rounding.locals],
    body: [
      ...rounding.init,
      ...setCodeConstants(qmax, constants),
      ...forRange(r, groups, 1, [
        ins.localGet(x), ins.localGet(g), ins.i32Const(4), ins.i32Mul, ins.i32Add, ins.localSet(end),
        ins.localGet(x), ins.v128Load(), ins.localSet(v),
        ...orderedKey([ins.localGet(v)]), ins.localTee(keyMin), ins.localSet(keyMax),
        ins.localGet(x), ins.i32Const(16), ins.i32Add, ins.localSet(p),
        ...forRange(p, end, 16, [
          ins.localGet(p), ins.v128Load(), ins.localSet(v),
          ...orderedKey([ins.localGet(v)]), ins.localSet(v),
          ins.localGet(keyMin), ins.localGet(v), ins.i32x4MinS, ins.localSet(keyMin),
          ins.localGet(keyMax), ins.localGet(v), ins.i32x4MaxS, ins.localSet(keyMax),
        ]),
        ...horizontalKey(keyMin, ins.i32x4MinS, key), ins.localSet(lo),
        ...horizontalKey(keyMax, ins.i32x4MaxS, key), ins.localSet(hi),
        ...nonFinite([ins.localGet(lo)], [ins.localGet(hi)], ins.f32Sub, ins.f32Add), ins.localTee(s), ins.localGet(s), ins.f32Ne,
        ins.localGet(flag), ins.i32Or, ins.localSet(flag),
        // MaxOptimizer in T: scale = (max − min) / qmax, shift = −min (splatted: the codes need vectors anyway)
        ins.localGet(hi), ins.f32x4Splat, ins.localGet(lo), ins.f32x4Splat, ins.f32x4Sub, ...rounding.round,
        ins.localGet(constants.qmax), ins.f32x4Div, ...rounding.round, ins.localSet(vs),
        ins.localGet(lo), ins.f32x4Splat, ins.f32x4Neg, ins.localSet(vz),
        ins.localGet(scaleOut), ins.localGet(vs), ins.f32x4ExtractLane(0), ins.f32Store(),
        ins.localGet(shiftOut), ins.localGet(vz), ins.f32x4ExtractLane(0), ins.f32Store(),
        ins.localGet(x), ins.localSet(p),
        ...forRange(p, end, 64, [
          ins.localGet(dst),
          ins.localGet(dst), ins.v128Load(),
          ...code(0), ...code(16), ins.i16x8NarrowI32x4S,
          ...code(32), ...code(48), ins.i16x8NarrowI32x4S,
          ins.i8x16NarrowI16x8U,
          ins.localGet(bitShift), ins.i8x16Shl,
          ins.v128Or, ins.v128Store(),
          ...addTo(dst, ins.i32Const(16)),
        ]),
        ins.localGet(end), ins.localSet(x),
        ...addTo(scaleOut, ins.i32Const(4)),
        ...addTo(shiftOut, ins.i32Const(4)),
      ]),
      ins.localGet(flag),
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
    ins.localGet(dst), ins.localGet(dst), ins.i32Load8U(), ins.localGet(c), ins.i32x4ExtractLane(lane), ins.i32Or, ins.i32Store8(),
    ...addTo(dst, ins.localGet(blocks)),
  ];
  return {
    name: kernelName('quantizeColumns', dtype),
    params: [i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32],
    results: [i32],
    locals: [i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, v128, v128, v128, v128, v128, v128, v128, v128, ...rounding.locals],
    body: [
      ...rounding.init,
      ...setCodeConstants(qmax, constants),
      ins.localGet(qmax), ins.f32ConvertI32U, ins.f32x4Splat, ins.localSet(qf),
      ins.localGet(channels), ins.i32Const(4), ins.i32Mul, ins.localSet(rowBytes),
      ins.localGet(scratch), ins.localGet(rowBytes), ins.i32Add, ins.localSet(scratchHigh),
      ins.localGet(channels), ins.localGet(blocks), ins.i32Mul, ins.localSet(cols),
      ins.localGet(a0), ins.localSet(column),
      ...forRange(a, blockCount, 1, [
        // per-channel min key (scratch) and max key (scratchHigh) over the block's g rows
        ins.i32Const(0), ins.localSet(d),
        ...forRange(d, rowBytes, 16, [
          ...at(x, d), ins.v128Load(), ins.localSet(v),
          ...orderedKey([ins.localGet(v)]), ins.localSet(v),
          ...at(scratch, d), ins.localGet(v), ins.v128Store(),
          ...at(scratchHigh, d), ins.localGet(v), ins.v128Store(),
        ]),
        ins.localGet(x), ins.localGet(rowBytes), ins.i32Add, ins.localSet(row),
        ins.i32Const(1), ins.localSet(j),
        ...forRange(j, g, 1, [
          ins.i32Const(0), ins.localSet(d),
          ...forRange(d, rowBytes, 16, [
            ...at(row, d), ins.v128Load(), ins.localSet(v),
            ...orderedKey([ins.localGet(v)]), ins.localSet(v),
            ...at(scratch, d), ...at(scratch, d), ins.v128Load(), ins.localGet(v), ins.i32x4MinS, ins.v128Store(),
            ...at(scratchHigh, d), ...at(scratchHigh, d), ins.v128Load(), ins.localGet(v), ins.i32x4MaxS, ins.v128Store(),
          ]),
          ...addTo(row, ins.localGet(rowBytes)),
        ]),
        // MaxOptimizer per channel, in place: scratch ← scale, scratchHigh ← shift
        ins.i32Const(0), ins.localSet(d),
        ...forRange(d, rowBytes, 16, [
          ...orderedKey([...at(scratch, d), ins.v128Load()]), ins.localSet(lo),
          ...orderedKey([...at(scratchHigh, d), ins.v128Load()]), ins.localSet(hi),
          ...nonFinite([ins.localGet(lo)], [ins.localGet(hi)], ins.f32x4Sub, ins.f32x4Add), ins.localTee(v), ins.localGet(v), ins.f32x4Ne,
          ins.v128AnyTrue, ins.localGet(flag), ins.i32Or, ins.localSet(flag),
          ...at(scratch, d), ins.localGet(hi), ins.localGet(lo), ins.f32x4Sub, ...rounding.round, ins.localGet(qf), ins.f32x4Div,
          ...rounding.round, ins.v128Store(),
          ...at(scratchHigh, d), ins.localGet(lo), ins.f32x4Neg, ins.v128Store(),
        ]),
        // scale/shift of channel d go to column d·A + a
        ins.localGet(column), ins.i32Const(4), ins.i32Mul, ins.localSet(p),
        ins.i32Const(0), ins.localSet(d),
        ...forRange(d, rowBytes, 4, [
          ...at(scaleOut, p), ...at(scratch, d), ins.f32Load(), ins.f32Store(),
          ...at(shiftOut, p), ...at(scratchHigh, d), ins.f32Load(), ins.f32Store(),
          ...addTo(p, [...ins.localGet(blocks), ...ins.i32Const(4), ...ins.i32Mul]),
        ]),
        // codes: row j of the block goes to packed row j mod rowDim, bit slot bits·⌊j / rowDim⌋
        ins.i32Const(0), ins.localSet(rowInBlock),
        ins.i32Const(0), ins.localSet(bitShift),
        ins.localGet(x), ins.localSet(row),
        ins.i32Const(0), ins.localSet(j),
        ...forRange(j, g, 1, [
          ins.localGet(packed), ins.localGet(rowInBlock), ins.localGet(cols), ins.i32Mul, ins.i32Add, ins.localGet(column), ins.i32Add,
          ins.localSet(dst),
          ins.i32Const(0), ins.localSet(d),
          ...forRange(d, rowBytes, 16, [
            ...codes([...at(row, d), ins.v128Load()], [...at(scratchHigh, d), ins.v128Load()], [...at(scratch, d), ins.v128Load()], constants, rounding),
            ins.localGet(bitShift), ins.i32x4Shl, ins.localSet(c),
            ...orLane(0), ...orLane(1), ...orLane(2), ...orLane(3),
          ]),
          ...addTo(row, ins.localGet(rowBytes)),
          ...addTo(rowInBlock, ins.i32Const(1)),
          ins.localGet(rowInBlock), ins.localGet(rowDim), ins.i32Eq, ins.if,
          ins.i32Const(0), ins.localSet(rowInBlock),
          ...addTo(bitShift, ins.localGet(bits)),
          ins.end,
        ]),
        ins.localGet(row), ins.localSet(x),
        ...addTo(column, ins.i32Const(1)),
      ]),
      ins.localGet(flag),
    ],
  };
}

function dequantizeRows(dtype: KernelDtype): WasmFunction {
  const [packed, groups, g, bitShift, mask, scale, shift, out] = [0, 1, 2, 3, 4, 5, 6, 7];
  const [r, end] = [8, 9];
  const [vs, vz, vm, b, h] = [10, 11, 12, 13, 14];
  const rounding = roundingFor(dtype, 15);
  const value = (widen: Code, offset: number): Code[] => [
    ins.localGet(out), ins.localGet(h), widen, ins.f32x4ConvertI32x4S,
    ins.localGet(vs), ins.f32x4Mul, ...rounding.round, ins.localGet(vz), ins.f32x4Sub, ...rounding.round, ins.v128Store(offset),
  ];
  return {
    name: kernelName('dequantizeRows', dtype),
    params: [i32, i32, i32, i32, i32, i32, i32, i32],
    results: [],
    locals: [i32, i32, v128, v128, v128, v128, v128, ...rounding.locals],
    body: [
      ...rounding.init,
      ins.localGet(mask), ins.i8x16Splat, ins.localSet(vm),
      ...forRange(r, groups, 1, [
        ins.localGet(scale), ins.f32Load(), ins.f32x4Splat, ins.localSet(vs),
        ins.localGet(shift), ins.f32Load(), ins.f32x4Splat, ins.localSet(vz),
        ins.localGet(packed), ins.localGet(g), ins.i32Add, ins.localSet(end),
        ...forRange(packed, end, 16, [
          ins.localGet(packed), ins.v128Load(), ins.localGet(bitShift), ins.i8x16ShrU, ins.localGet(vm), ins.v128And, ins.localSet(b),
          ins.localGet(b), ins.i16x8ExtendLowI8x16U, ins.localSet(h),
          ...value(ins.i32x4ExtendLowI16x8U, 0), ...value(ins.i32x4ExtendHighI16x8U, 16),
          ins.localGet(b), ins.i16x8ExtendHighI8x16U, ins.localSet(h),
          ...value(ins.i32x4ExtendLowI16x8U, 32), ...value(ins.i32x4ExtendHighI16x8U, 48),
          ...addTo(out, ins.i32Const(64)),
        ]),
        ...addTo(scale, ins.i32Const(4)),
        ...addTo(shift, ins.i32Const(4)),
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
  const nextByte: Code[] = [ins.localGet(src), ins.i32Load8U(), ...addTo(src, ins.localGet(blocks))];
  return {
    name: kernelName('dequantizeColumns', dtype),
    params: [i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32],
    results: [],
    locals: [i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, v128, v128, ...rounding.locals],
    body: [
      ...rounding.init,
      ins.localGet(mask), ins.i32x4Splat, ins.localSet(vm),
      ins.localGet(channels), ins.i32Const(4), ins.i32Mul, ins.localSet(rowBytes),
      ins.localGet(scratch), ins.localGet(rowBytes), ins.i32Add, ins.localSet(scratchHigh),
      ins.localGet(channels), ins.localGet(blocks), ins.i32Mul, ins.localSet(cols),
      ins.localGet(a0), ins.localSet(column),
      ...forRange(a, blockCount, 1, [
        // gather this block's per-channel scale and shift (columns d·A + a) into scratch
        ins.localGet(column), ins.i32Const(4), ins.i32Mul, ins.localSet(p),
        ins.i32Const(0), ins.localSet(d),
        ...forRange(d, rowBytes, 4, [
          ...at(scratch, d), ...at(scale, p), ins.f32Load(), ins.f32Store(),
          ...at(scratchHigh, d), ...at(shift, p), ins.f32Load(), ins.f32Store(),
          ...addTo(p, [...ins.localGet(blocks), ...ins.i32Const(4), ...ins.i32Mul]),
        ]),
        ins.i32Const(0), ins.localSet(rowInBlock),
        ins.i32Const(0), ins.localSet(bitShift),
        ins.i32Const(0), ins.localSet(j),
        ...forRange(j, g, 1, [
          ins.localGet(packed), ins.localGet(rowInBlock), ins.localGet(cols), ins.i32Mul, ins.i32Add, ins.localGet(column), ins.i32Add,
          ins.localSet(src),
          ins.i32Const(0), ins.localSet(d),
          ...forRange(d, rowBytes, 16, [
            ...nextByte, ins.i32x4Splat,
            ...nextByte, ins.i32x4ReplaceLane(1),
            ...nextByte, ins.i32x4ReplaceLane(2),
            ...nextByte, ins.i32x4ReplaceLane(3),
            ins.localGet(bitShift), ins.i32x4ShrU, ins.localGet(vm), ins.v128And, ins.localSet(q),
            ins.localGet(out),
            ins.localGet(q), ins.f32x4ConvertI32x4S, ...at(scratch, d), ins.v128Load(), ins.f32x4Mul, ...rounding.round,
            ...at(scratchHigh, d), ins.v128Load(), ins.f32x4Sub, ...rounding.round,
            ins.v128Store(),
            ...addTo(out, ins.i32Const(16)),
          ]),
          ...addTo(rowInBlock, ins.i32Const(1)),
          ins.localGet(rowInBlock), ins.localGet(rowDim), ins.i32Eq, ins.if,
          ins.i32Const(0), ins.localSet(rowInBlock),
          ...addTo(bitShift, ins.localGet(bits)),
          ins.end,
        ]),
        ...addTo(column, ins.i32Const(1)),
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
    [ins.localGet(xj), ...blockOffset, ins.v128Load()], [ins.localGet(zp), ins.v128Load(16 * t4)], [ins.localGet(sp), ins.v128Load(16 * t4)], constants, rounding,
  );
  const storeLane = (lane: number): Code[] => [
    ins.localGet(dst), ins.localGet(acc), ins.i32x4ExtractLane(lane), ins.i32Store(), ...addTo(dst, ins.localGet(blocks)),
  ];
  return {
    name: kernelName('quantizeColumnQuads', dtype),
    params: [i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32],
    results: [i32],
    locals: [...Array<ValueType>(26).fill(i32), ...Array<ValueType>(8).fill(v128), ...rounding.locals],
    body: [
      ...rounding.init,
      ...setCodeConstants(qmax, constants),
      ins.localGet(qmax), ins.f32ConvertI32U, ins.f32x4Splat, ins.localSet(qf),
      ins.localGet(channels), ins.i32Const(4), ins.i32Mul, ins.localSet(rowBytes),
      ins.localGet(rowBytes), ins.localGet(g), ins.i32Mul, ins.localSet(blockBytes),
      ins.localGet(blockBytes), ins.i32Const(2), ins.i32Mul, ins.localSet(block2),
      ins.localGet(blockBytes), ins.i32Const(3), ins.i32Mul, ins.localSet(block3),
      ins.localGet(rowBytes), ins.localGet(rowDim), ins.i32Mul, ins.localSet(stepBytes),
      ins.localGet(scratch), ins.localGet(rowBytes), ins.i32Add, ins.localSet(maxKeys),
      ins.localGet(maxKeys), ins.localGet(rowBytes), ins.i32Add, ins.localSet(quadScale),
      ins.localGet(quadScale), ins.localGet(rowBytes), ins.i32Const(4), ins.i32Mul, ins.i32Add, ins.localSet(quadShift),
      ins.localGet(channels), ins.localGet(blocks), ins.i32Mul, ins.localSet(cols),
      ins.localGet(a0), ins.localSet(column),
      ...forRange(quad, quadCount, 1, [
        ins.localGet(x), ins.localSet(blockX),
        ...repeat(t, 4, [
          // min/max keys of block t over its g rows
          ins.i32Const(0), ins.localSet(d),
          ...forRange(d, rowBytes, 16, [
            ...orderedKey([...at(blockX, d), ins.v128Load()]), ins.localSet(v),
            ...at(scratch, d), ins.localGet(v), ins.v128Store(),
            ...at(maxKeys, d), ins.localGet(v), ins.v128Store(),
          ]),
          ins.localGet(blockX), ins.localGet(rowBytes), ins.i32Add, ins.localSet(row),
          ins.i32Const(1), ins.localSet(j),
          ...forRange(j, g, 1, [
            ins.i32Const(0), ins.localSet(d),
            ...forRange(d, rowBytes, 16, [
              ...orderedKey([...at(row, d), ins.v128Load()]), ins.localSet(v),
              ...at(scratch, d), ...at(scratch, d), ins.v128Load(), ins.localGet(v), ins.i32x4MinS, ins.v128Store(),
              ...at(maxKeys, d), ...at(maxKeys, d), ins.v128Load(), ins.localGet(v), ins.i32x4MaxS, ins.v128Store(),
            ]),
            ...addTo(row, ins.localGet(rowBytes)),
          ]),
          // MaxOptimizer for block t, into the quad scratch at c·64 + t·16
          ins.i32Const(0), ins.localSet(d),
          ...forRange(d, rowBytes, 16, [
            ...orderedKey([...at(scratch, d), ins.v128Load()]), ins.localSet(lo),
            ...orderedKey([...at(maxKeys, d), ins.v128Load()]), ins.localSet(hi),
            ...nonFinite([ins.localGet(lo)], [ins.localGet(hi)], ins.f32x4Sub, ins.f32x4Add), ins.localTee(v), ins.localGet(v), ins.f32x4Ne,
            ins.v128AnyTrue, ins.localGet(flag), ins.i32Or, ins.localSet(flag),
            ins.localGet(d), ins.i32Const(2), ins.i32Shl, ins.localGet(t), ins.i32Const(4), ins.i32Shl, ins.i32Add, ins.localSet(q),
            ...at(quadScale, q), ins.localGet(hi), ins.localGet(lo), ins.f32x4Sub, ...rounding.round, ins.localGet(qf), ins.f32x4Div,
            ...rounding.round, ins.v128Store(),
            ...at(quadShift, q), ins.localGet(lo), ins.f32x4Neg, ins.v128Store(),
          ]),
          ...addTo(blockX, ins.localGet(blockBytes)),
        ]),
        ...moveQuadParams({ c, q, arr, channels, blocks, column }, quadScale, quadShift, scaleOut, shiftOut, true),
        // codes, one packed row at a time
        ins.i32Const(0), ins.localSet(pr),
        ...forRange(pr, rowDim, 1, [
          ins.localGet(packed), ins.localGet(pr), ins.localGet(cols), ins.i32Mul, ins.i32Add, ins.localGet(column), ins.i32Add, ins.localSet(dst),
          ins.i32Const(0), ins.localSet(d),
          ...forRange(d, rowBytes, 16, [
            ins.i32Const(0), ins.i32x4Splat, ins.localSet(acc),
            ins.localGet(pr), ins.localSet(j),
            ins.i32Const(0), ins.localSet(bitShift),
            ins.localGet(x), ins.localGet(pr), ins.localGet(rowBytes), ins.i32Mul, ins.i32Add, ins.localGet(d), ins.i32Add, ins.localSet(xj),
            ins.localGet(d), ins.i32Const(2), ins.i32Shl, ins.localTee(sp), ins.localGet(quadShift), ins.i32Add, ins.localSet(zp),
            ...addTo(sp, ins.localGet(quadScale)),
            ins.block, ins.loop,
            ins.localGet(j), ins.localGet(g), ins.i32GeU, ins.brIf(1),
            ins.localGet(acc),
            ...codeOf([], 0), ...codeOf([ins.localGet(blockBytes), ins.i32Add], 1), ins.i16x8NarrowI32x4S,
            ...codeOf([ins.localGet(block2), ins.i32Add], 2), ...codeOf([ins.localGet(block3), ins.i32Add], 3), ins.i16x8NarrowI32x4S,
            ins.i8x16NarrowI16x8U,
            ins.localTee(v), ins.localGet(v), ins.i8x16Shuffle(TRANSPOSE_4X4),
            ins.localGet(bitShift), ins.i8x16Shl,
            ins.v128Or, ins.localSet(acc),
            ...addTo(j, ins.localGet(rowDim)),
            ...addTo(bitShift, ins.localGet(bits)),
            ...addTo(xj, ins.localGet(stepBytes)),
            ins.br(0),
            ins.end, ins.end,
            ...storeLane(0), ...storeLane(1), ...storeLane(2), ...storeLane(3),
          ]),
        ]),
        ins.localGet(blockX), ins.localSet(x),
        ...addTo(column, ins.i32Const(4)),
      ]),
      ins.localGet(flag),
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
    ins.localGet(src), ins.i32Load(), lane === 0 ? ins.i32x4Splat : ins.i32x4ReplaceLane(lane), ...addTo(src, ins.localGet(blocks)),
  ];
  const value = (widen: Code, t: number, blockOffset: Code[]): Code[] => [
    ins.localGet(outj), ...blockOffset,
    ins.localGet(h), widen, ins.f32x4ConvertI32x4S,
    ins.localGet(sp), ins.v128Load(16 * t), ins.f32x4Mul, ...rounding.round,
    ins.localGet(zp), ins.v128Load(16 * t), ins.f32x4Sub, ...rounding.round,
    ins.v128Store(),
  ];
  return {
    name: kernelName('dequantizeColumnQuads', dtype),
    params: [i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32],
    results: [],
    locals: [...Array<ValueType>(20).fill(i32), ...Array<ValueType>(4).fill(v128), ...rounding.locals],
    body: [
      ...rounding.init,
      ins.localGet(mask), ins.i8x16Splat, ins.localSet(vm),
      ins.localGet(channels), ins.i32Const(4), ins.i32Mul, ins.localSet(rowBytes),
      ins.localGet(rowBytes), ins.localGet(g), ins.i32Mul, ins.localSet(blockBytes),
      ins.localGet(blockBytes), ins.i32Const(2), ins.i32Mul, ins.localSet(block2),
      ins.localGet(blockBytes), ins.i32Const(3), ins.i32Mul, ins.localSet(block3),
      ins.localGet(rowBytes), ins.localGet(rowDim), ins.i32Mul, ins.localSet(stepBytes),
      ins.localGet(scratch), ins.localGet(rowBytes), ins.i32Const(4), ins.i32Mul, ins.i32Add, ins.localSet(quadShift),
      ins.localGet(channels), ins.localGet(blocks), ins.i32Mul, ins.localSet(cols),
      ins.localGet(a0), ins.localSet(column),
      ...forRange(quad, quadCount, 1, [
        ...moveQuadParams({ c, q, arr, channels, blocks, column }, scratch, quadShift, scale, shift, false),
        ins.i32Const(0), ins.localSet(pr),
        ...forRange(pr, rowDim, 1, [
          ins.localGet(packed), ins.localGet(pr), ins.localGet(cols), ins.i32Mul, ins.i32Add, ins.localGet(column), ins.i32Add, ins.localSet(src),
          ins.i32Const(0), ins.localSet(d),
          ...forRange(d, rowBytes, 16, [
            ...nextWord(0), ...nextWord(1), ...nextWord(2), ...nextWord(3), ins.localTee(w), ins.localGet(w),
            ins.i8x16Shuffle(TRANSPOSE_4X4), ins.localSet(w),
            ins.localGet(pr), ins.localSet(j),
            ins.i32Const(0), ins.localSet(bitShift),
            ins.localGet(out), ins.localGet(pr), ins.localGet(rowBytes), ins.i32Mul, ins.i32Add, ins.localGet(d), ins.i32Add, ins.localSet(outj),
            ins.localGet(d), ins.i32Const(2), ins.i32Shl, ins.localTee(sp), ins.localGet(quadShift), ins.i32Add, ins.localSet(zp),
            ...addTo(sp, ins.localGet(scratch)),
            ins.block, ins.loop,
            ins.localGet(j), ins.localGet(g), ins.i32GeU, ins.brIf(1),
            ins.localGet(w), ins.localGet(bitShift), ins.i8x16ShrU, ins.localGet(vm), ins.v128And, ins.localSet(b),
            ins.localGet(b), ins.i16x8ExtendLowI8x16U, ins.localSet(h),
            ...value(ins.i32x4ExtendLowI16x8U, 0, []),
            ...value(ins.i32x4ExtendHighI16x8U, 1, [ins.localGet(blockBytes), ins.i32Add]),
            ins.localGet(b), ins.i16x8ExtendHighI8x16U, ins.localSet(h),
            ...value(ins.i32x4ExtendLowI16x8U, 2, [ins.localGet(block2), ins.i32Add]),
            ...value(ins.i32x4ExtendHighI16x8U, 3, [ins.localGet(block3), ins.i32Add]),
            ...addTo(j, ins.localGet(rowDim)),
            ...addTo(bitShift, ins.localGet(bits)),
            ...addTo(outj, ins.localGet(stepBytes)),
            ins.br(0),
            ins.end, ins.end,
          ]),
        ]),
        ins.localGet(out), ins.localGet(block3), ins.i32Add, ins.localGet(blockBytes), ins.i32Add, ins.localSet(out),
        ...addTo(column, ins.i32Const(4)),
      ]),
    ],
  };
}
