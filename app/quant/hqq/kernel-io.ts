import { FunctionBuilder, ValType, block, br, brIf, f32, f32x4, get, i16x8, i32, i32x4, i8x16, ifElse, ifThen, loop, seq, set, v128 } from '../../wasm/wasm-encoder.js';
import type { Code, Local } from '../../wasm/wasm-encoder.js';
import { ZERO, elementLocals, initElement, sharedParams, slotLocals, storeCodes } from './kernel-element.js';
import type { SlotLocals } from './kernel-element.js';

/**
 * The kernels around the optimizer: group ranges (spec §3.2 step 2), final codes and bit packing
 * (step 4, bitpack.ts), and float32 dequantization (step 5, dequantize.ts).
 */
const I = ValType.I32;

/** Final codes for axis 1: params (pW, pS, pZ, pCodes, groups, groupSize, maxCode f32). */
export function codesContiguous(): FunctionBuilder {
  const fb = new FunctionBuilder('codesContiguous', [I, I, I, I, I, I, ValType.F32], []);
  const [pW, pS, pZ, pCodes, groups, groupSize, maxCode] = fb.params as [Local, Local, Local, Local, Local, Local, Local];
  const sv = fb.local(ValType.V128);
  const zv = fb.local(ValType.V128);
  const L = elementLocals(fb, slotLocals(fb, 1, sharedParams(sv, zv)));
  const [S] = L.slots as [SlotLocals];
  const group = fb.local(I);
  const index = fb.local(I);
  const end = fb.local(I);
  fb.emit(
    initElement(L, maxCode),
    block(loop(
      brIf(1, i32.geU(get(group), get(groups))),
      set(sv, f32x4.splat(f32.load(i32.add(get(pS), i32.shl(get(group), i32.const(2)))))),
      set(zv, f32x4.splat(f32.load(i32.add(get(pZ), i32.shl(get(group), i32.const(2)))))),
      set(end, i32.add(get(index), get(groupSize))),
      block(loop(
        brIf(1, i32.geU(get(index), get(end))),
        set(S.w, v128.load(i32.add(get(pW), i32.shl(get(index), i32.const(2))))),
        storeCodes(L, S, i32.add(get(pCodes), get(index))),
        set(index, i32.add(get(index), i32.const(4))),
        br(0),
      )),
      set(group, i32.add(get(group), i32.const(1))),
      br(0),
    )),
  );
  return fb;
}

/** Final codes for axis 0: params (pW, pS, pZ, pCodes, rows, cols, maxCode f32). */
export function codesStrided(): FunctionBuilder {
  const fb = new FunctionBuilder('codesStrided', [I, I, I, I, I, I, ValType.F32], []);
  const [pW, pS, pZ, pCodes, rows, cols, maxCode] = fb.params as [Local, Local, Local, Local, Local, Local, Local];
  const sv = fb.local(ValType.V128);
  const zv = fb.local(ValType.V128);
  const L = elementLocals(fb, slotLocals(fb, 1, sharedParams(sv, zv)));
  const [S] = L.slots as [SlotLocals];
  const row = fb.local(I);
  const column = fb.local(I);
  const index = fb.local(I);
  fb.emit(
    initElement(L, maxCode),
    block(loop(
      brIf(1, i32.geU(get(row), get(rows))),
      set(column, i32.const(0)),
      block(loop(
        brIf(1, i32.geU(get(column), get(cols))),
        set(S.w, v128.load(i32.add(get(pW), i32.shl(get(index), i32.const(2))))),
        set(sv, v128.load(i32.add(get(pS), i32.shl(get(column), i32.const(2))))),
        set(zv, v128.load(i32.add(get(pZ), i32.shl(get(column), i32.const(2))))),
        storeCodes(L, S, i32.add(get(pCodes), get(index))),
        set(index, i32.add(get(index), i32.const(4))),
        set(column, i32.add(get(column), i32.const(4))),
        br(0),
      )),
      set(row, i32.add(get(row), i32.const(1))),
      br(0),
    )),
  );
  return fb;
}

/**
 * Per-group min and max (IEEE: NaN propagates, so a non-finite input shows in the result) for axis 1:
 * params (pW, pMin, pMax, groups, groupSize), groupSize a multiple of 4.
 */
export function rangeContiguous(): FunctionBuilder {
  const fb = new FunctionBuilder('rangeContiguous', [I, I, I, I, I], []);
  const [pW, pMin, pMax, groups, groupSize] = fb.params as [Local, Local, Local, Local, Local];
  const lo = fb.local(ValType.V128);
  const hi = fb.local(ValType.V128);
  const x = fb.local(ValType.V128);
  const group = fb.local(I);
  const ptr = fb.local(I);
  const end = fb.local(I);
  const lanes = (v: Local, reduce: (a: Code, b: Code) => Code): Code =>
    reduce(reduce(reduce(f32x4.extractLane(get(v), 0), f32x4.extractLane(get(v), 1)), f32x4.extractLane(get(v), 2)), f32x4.extractLane(get(v), 3));
  fb.emit(
    set(ptr, get(pW)),
    block(loop(
      brIf(1, i32.geU(get(group), get(groups))),
      set(lo, v128.f32x4Const(Infinity, Infinity, Infinity, Infinity)),
      set(hi, v128.f32x4Const(-Infinity, -Infinity, -Infinity, -Infinity)),
      set(end, i32.add(get(ptr), i32.shl(get(groupSize), i32.const(2)))),
      block(loop(
        brIf(1, i32.geU(get(ptr), get(end))),
        set(x, v128.load(get(ptr))),
        set(lo, f32x4.min(get(lo), get(x))),
        set(hi, f32x4.max(get(hi), get(x))),
        set(ptr, i32.add(get(ptr), i32.const(16))),
        br(0),
      )),
      f32.store(i32.add(get(pMin), i32.shl(get(group), i32.const(2))), lanes(lo, f32.min)),
      f32.store(i32.add(get(pMax), i32.shl(get(group), i32.const(2))), lanes(hi, f32.max)),
      set(group, i32.add(get(group), i32.const(1))),
      br(0),
    )),
  );
  return fb;
}

/** Per-column min and max of `[rows, cols]` (axis 0): params (pW, pMin, pMax, rows, cols), cols a multiple of 4. */
export function rangeStrided(): FunctionBuilder {
  const fb = new FunctionBuilder('rangeStrided', [I, I, I, I, I], []);
  const [pW, pMin, pMax, rows, cols] = fb.params as [Local, Local, Local, Local, Local];
  const x = fb.local(ValType.V128);
  const row = fb.local(I);
  const offset = fb.local(I);
  const rowBytes = fb.local(I);
  const ptr = fb.local(I);
  const overColumns = (...inner: Code[]): Code => seq(
    set(offset, i32.const(0)),
    block(loop(brIf(1, i32.geU(get(offset), get(rowBytes))), ...inner, set(offset, i32.add(get(offset), i32.const(16))), br(0))),
  );
  const at = (base: Local): Code => i32.add(get(base), get(offset));
  fb.emit(
    set(rowBytes, i32.shl(get(cols), i32.const(2))),
    overColumns(
      v128.store(at(pMin), v128.f32x4Const(Infinity, Infinity, Infinity, Infinity)),
      v128.store(at(pMax), v128.f32x4Const(-Infinity, -Infinity, -Infinity, -Infinity)),
    ),
    set(ptr, get(pW)),
    block(loop(
      brIf(1, i32.geU(get(row), get(rows))),
      overColumns(
        set(x, v128.load(i32.add(get(ptr), get(offset)))),
        v128.store(at(pMin), f32x4.min(v128.load(at(pMin)), get(x))),
        v128.store(at(pMax), f32x4.max(v128.load(at(pMax)), get(x))),
      ),
      set(ptr, i32.add(get(ptr), get(rowBytes))),
      set(row, i32.add(get(row), i32.const(1))),
      br(0),
    )),
  );
  return fb;
}

/**
 * bitpack.ts's uint8 packing, 16 bytes at a time: params (pCodes, pOut, planeBytes, planes, nbits);
 * `out[i] = Σ_k codes[k·planeBytes + i] << (8 − nbits·(k + 1))`, planeBytes a multiple of 16.
 */
export function packPlanes(): FunctionBuilder {
  const fb = new FunctionBuilder('packPlanes', [I, I, I, I, I], []);
  const [pCodes, pOut, planeBytes, planes, nbits] = fb.params as [Local, Local, Local, Local, Local];
  const acc = fb.local(ValType.V128);
  const offset = fb.local(I);
  const plane = fb.local(I);
  fb.emit(
    block(loop(
      brIf(1, i32.geU(get(offset), get(planeBytes))),
      set(acc, ZERO),
      set(plane, i32.const(0)),
      block(loop(
        brIf(1, i32.geU(get(plane), get(planes))),
        set(acc, v128.or(get(acc), i8x16.shl(
          v128.load(i32.add(i32.add(get(pCodes), get(offset)), i32.mul(get(plane), get(planeBytes)))),
          i32.sub(i32.const(8), i32.mul(get(nbits), i32.add(get(plane), i32.const(1))))))),
        set(plane, i32.add(get(plane), i32.const(1))),
        br(0),
      )),
      v128.store(i32.add(get(pOut), get(offset)), get(acc)),
      set(offset, i32.add(get(offset), i32.const(16))),
      br(0),
    )),
  );
  return fb;
}

/**
 * float32 dequantization `fround(fround(code − zero) · scale)` straight from uint8 packed planes, for
 * the output rows [rowBegin, rowEnd), written contiguously at pOut: params (pPacked, pScale, pZero,
 * pOut, planeRows, cols, rowBegin, rowEnd, nbits, axis). Output row R = k·planeRows + r comes from
 * packed row r at bit 8 − nbits·(k + 1); cols a multiple of 4. Columns go 16 at a time, then 4.
 */
export function dequantize(): FunctionBuilder {
  const fb = new FunctionBuilder('dequantize', [I, I, I, I, I, I, I, I, I, I], []);
  const [pPacked, pScale, pZero, pOut, planeRows, cols, rowBegin, rowEnd, nbits, axis] = fb.params as [Local, Local, Local, Local, Local, Local, Local, Local, Local, Local];
  const plane = fb.local(I);
  const planeEnd = fb.local(I);
  const outRow = fb.local(I);
  const column = fb.local(I);
  const shift = fb.local(I);
  const mask = fb.local(ValType.V128);
  const source = fb.local(I);
  const target = fb.local(I);
  const sv = fb.local(ValType.V128);
  const zv = fb.local(ValType.V128);
  const bytes = fb.local(ValType.V128);
  const half = fb.local(ValType.V128);
  const groupParam = (base: Local): Code => f32x4.splat(f32.load(i32.add(get(base), i32.shl(get(outRow), i32.const(2)))));
  const columnParam = (base: Local, offset: number): Code => v128.load(i32.add(get(base), i32.shl(get(column), i32.const(2))), offset);
  /** dequantizes 4 codes (i32x4) for columns column + 4·quarter .. +3; axis 0 reads each column's scale and zero */
  const store4 = (codes: Code, quarter: number, strided: boolean): Code => {
    const s = strided ? columnParam(pScale, 16 * quarter) : get(sv);
    const z = strided ? columnParam(pZero, 16 * quarter) : get(zv);
    return v128.store(i32.add(get(target), i32.shl(get(column), i32.const(2))),
      f32x4.mul(f32x4.sub(f32x4.convertI32x4U(codes), z), s), 16 * quarter);
  };
  const codesOf = (value: Code): Code => v128.and(i8x16.shrU(value, get(shift)), get(mask));
  /** one output row, columns 16 at a time, then 4 */
  const row = (strided: boolean): Code => seq(
    set(column, i32.const(0)),
    block(loop(
      brIf(1, i32.gtU(i32.add(get(column), i32.const(16)), get(cols))),
      set(bytes, codesOf(v128.load(i32.add(get(source), get(column))))),
      set(half, i16x8.extendLowI8x16U(get(bytes))),
      store4(i32x4.extendLowI16x8U(get(half)), 0, strided),
      store4(i32x4.extendHighI16x8U(get(half)), 1, strided),
      set(half, i16x8.extendHighI8x16U(get(bytes))),
      store4(i32x4.extendLowI16x8U(get(half)), 2, strided),
      store4(i32x4.extendHighI16x8U(get(half)), 3, strided),
      set(column, i32.add(get(column), i32.const(16))),
      br(0),
    )),
    block(loop(
      brIf(1, i32.geU(get(column), get(cols))),
      store4(i32x4.extendLowI16x8U(i16x8.extendLowI8x16U(codesOf(v128.load32Zero(i32.add(get(source), get(column)))))), 0, strided),
      set(column, i32.add(get(column), i32.const(4))),
      br(0),
    )),
  );
  /** source row and bit shift of output row `outRow`: packed row outRow − plane·planeRows, plane outRow / planeRows */
  const enterPlane = seq(
    set(shift, i32.sub(i32.const(8), i32.mul(get(nbits), i32.add(get(plane), i32.const(1))))),
    set(planeEnd, i32.mul(i32.add(get(plane), i32.const(1)), get(planeRows))),
    set(source, i32.add(get(pPacked), i32.mul(i32.sub(get(outRow), i32.mul(get(plane), get(planeRows))), get(cols)))),
  );
  fb.emit(
    set(mask, i8x16.splat(i32.sub(i32.shl(i32.const(1), get(nbits)), i32.const(1)))),
    set(outRow, get(rowBegin)),
    set(target, get(pOut)),
    set(plane, i32.divU(get(outRow), get(planeRows))),
    enterPlane,
    block(loop(
      brIf(1, i32.geU(get(outRow), get(rowEnd))),
      ifThen(i32.eq(get(outRow), get(planeEnd)), set(plane, i32.add(get(plane), i32.const(1))), enterPlane),
      ifElse(i32.eq(get(axis), i32.const(1)),
        [set(sv, groupParam(pScale)), set(zv, groupParam(pZero)), row(false)],
        [row(true)]),
      set(source, i32.add(get(source), get(cols))),
      set(target, i32.add(get(target), i32.shl(get(cols), i32.const(2)))),
      set(outRow, i32.add(get(outRow), i32.const(1))),
      br(0),
    )),
  );
  return fb;
}
