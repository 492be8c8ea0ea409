import {
  FunctionBuilder, ValType, block, br, brIf, encodeModule, f32, f32x4, f64x2, get, i16x8, i32, i32x4, i8x16, ifElse, ifThen,
  loop, seq, set, v128,
} from './wasm-builder.js';
import type { Code, Local } from './wasm-builder.js';
import { POW_TABLE_BITS, SHRINK_WEIGHT, SHRINK_ZERO_BELOW, POW_TABLES } from './shrink.js';

/**
 * The WebAssembly SIMD kernels of the HQQ optimizer. Each performs exactly the float32 operations of
 * optimize-js.ts (and the double operations of `shrinkPow`), four elements at a time, so both engines
 * give identical bits; the torch summation orders of torch-sum.ts are laid out as lane accumulators.
 *
 * Memory map (bytes): the power tables at fixed offsets, the error-sum state, then per-call buffers
 * placed by optimize-wasm.ts from `DYNAMIC_BASE`.
 */
export const TABLE_MANTISSA = 0; // 1024 × (m_j^e, 2^-23/m_j) f64 pairs
export const TABLE_EXPONENT = 16384; // 256 f64
/** 4 levels × 32 float32 slots of the running `multi_row_sum` of |W − W_r| */
export const ERROR_STATE = 18432;
/** float32 sum of |W − W_r| per thread chunk ("half"), written by the step kernels */
export const ERROR_OUT = 18944;
/** 32 float32 slots of the running group sum (axis 1) */
const GROUP_STATE = 19200;
/**
 * (mantissaPow[j] · exponentPow[b], 2^-23/m_j) for the 16 exponents b = 124..139 (0.125 <= x < 8192):
 * the products shrinkPow forms, precomputed, so the common case needs one table entry per lane.
 */
export const TABLE_COMBINED = 20480;
const COMBINED_FIRST_EXPONENT = 124;
const COMBINED_BITS = POW_TABLE_BITS + 4;
const COMBINED_ENTRIES = 1 << COMBINED_BITS;
export const DYNAMIC_BASE = TABLE_COMBINED + COMBINED_ENTRIES * 16;
export const PAGE_BYTES = 65536;

const LOW_BITS = 23 - POW_TABLE_BITS;
const LOW_MASK = (1 << LOW_BITS) - 1;
const TABLE_MASK = (1 << POW_TABLE_BITS) - 1;
export const VARIANT = { memoryAcc: true, noPow: false, noDiv: false, noSeries: false, noGather: false };
const ZACC = GROUP_STATE;
const SLOTS = 8; // v128 slot accumulators per 32-element torch "row" (4 AVX2 vectors × 8 lanes)

const ZERO = v128.i32x4Const(0, 0, 0, 0);
const SIGN = v128.i32x4Const(-0x80000000, -0x80000000, -0x80000000, -0x80000000);
const SKIP = v128.f32x4Const(SHRINK_ZERO_BELOW, SHRINK_ZERO_BELOW, SHRINK_ZERO_BELOW, SHRINK_ZERO_BELOW);
const TENTH = v128.f32x4Const(SHRINK_WEIGHT, SHRINK_WEIGHT, SHRINK_WEIGHT, SHRINK_WEIGHT);

/** Locals shared by the element computation of one function. */
interface ElementLocals {
  readonly w: Local;
  readonly sv: Local;
  readonly zv: Local;
  readonly maxCode: Local;
  readonly ws: Local;
  readonly q: Local;
  readonly xe: Local;
  readonly a: Local;
  readonly need: Local;
  readonly p: Local;
  readonly c: Local;
  readonly tableOffset: Local;
  readonly exponentOffset: Local;
  readonly entries0: Local;
  readonly entries1: Local;
  readonly r: Local;
  readonly r2: Local;
  /** constants, set once per call by `initConstants` (a v128.const in a loop is rebuilt at every use) */
  readonly k: Record<ConstantName, Local>;
}

type ConstantName = 'one' | 'c1' | 'c2' | 'c3' | 'c4' | 'sign' | 'skip' | 'tenth' | 'lowMask' | 'tableMask' | 'first' | 'entries';

function elementLocals(fb: FunctionBuilder): ElementLocals {
  const v = (): Local => fb.local(ValType.V128);
  return {
    w: v(), sv: v(), zv: v(), maxCode: v(), ws: v(), q: v(), xe: v(), a: v(), need: v(), p: v(), c: v(),
    tableOffset: v(), exponentOffset: v(), entries0: v(), entries1: v(), r: v(), r2: v(),
    k: Object.fromEntries(Object.keys(constantValues()).map((name) => [name, v()])) as Record<ConstantName, Local>,
  };
}

function constantValues(): Record<ConstantName, Code> {
  const [c1, c2, c3, c4] = POW_TABLES.coefficients;
  const first = COMBINED_FIRST_EXPONENT << POW_TABLE_BITS;
  const i32s = (x: number): Code => v128.i32x4Const(x, x, x, x);
  return {
    one: f64Splat(1), c1: f64Splat(c1), c2: f64Splat(c2), c3: f64Splat(c3), c4: f64Splat(c4),
    sign: SIGN, skip: SKIP, tenth: TENTH, lowMask: i32s(LOW_MASK), tableMask: i32s(TABLE_MASK),
    first: i32s(first), entries: i32s(COMBINED_ENTRIES),
  };
}

function initConstants(L: ElementLocals, maxCode: Local): Code {
  const values = constantValues();
  return seq(
    set(L.maxCode, f32x4.splat(get(maxCode))),
    ...(Object.keys(values) as ConstantName[]).map((name) => set(L.k[name], values[name])),
  );
}

const LOW_HALF = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
const HIGH_HALF = [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31];
const f64Splat = (v: number): Code => v128.const([...new Uint8Array(new Float64Array([v, v]).buffer)]);

/**
 * `shrinkPow` of the four lanes of `L.a` into `L.p`: the same double operations as shrink.ts, two
 * lanes per f64x2; table entries are fetched per lane (WebAssembly has no gather). When every lane
 * that needs the power lies in TABLE_COMBINED's range, one entry per lane replaces two lookups and a
 * product (same value: the product is what the table stores).
 */
function powVector(L: ElementLocals): Code {
  const k = (name: ConstantName): Code => get(L.k[name]);
  const pair = (low: number, combined: boolean): Code => {
    const entry = (lane: number): Code => VARIANT.noGather ? v128.load(i32.const(lane * 16), combined ? TABLE_COMBINED : TABLE_MANTISSA) : v128.load(i32x4.extractLane(get(L.tableOffset), lane), combined ? TABLE_COMBINED : TABLE_MANTISSA);
    const r = get(L.r);
    const r2 = get(L.r2);
    const series = f64x2.add(f64x2.add(k('one'), f64x2.mul(k('c1'), r)),
      f64x2.mul(r2, f64x2.add(f64x2.add(k('c2'), f64x2.mul(k('c3'), r)), f64x2.mul(r2, k('c4')))));
    const power = v128.shuffle(get(L.entries0), get(L.entries1), LOW_HALF);
    const scaled = combined ? power : f64x2.mul(power, v128.load64Lane(i32x4.extractLane(get(L.exponentOffset), low + 1),
      v128.load64Zero(i32x4.extractLane(get(L.exponentOffset), low), TABLE_EXPONENT), 1, TABLE_EXPONENT));
    const lowBits = v128.and(get(L.a), k('lowMask'));
    const d = f64x2.convertLowI32x4S(low === 0 ? lowBits : v128.shuffle(lowBits, lowBits, HIGH_HALF));
    return seq(
      set(L.entries0, entry(low)),
      set(L.entries1, entry(low + 1)),
      set(L.r, f64x2.mul(d, v128.shuffle(get(L.entries0), get(L.entries1), HIGH_HALF))),
      set(L.r2, f64x2.mul(get(L.r), get(L.r))),
      f64x2.demoteZeroToF32x4(VARIANT.noSeries ? f64x2.mul(scaled, r) : f64x2.mul(scaled, series)),
    );
  };
  const both = (combined: boolean): Code[] => [
    set(L.p, pair(0, combined)),
    set(L.p, v128.shuffle(get(L.p), pair(2, combined), LOW_HALF)),
  ];
  return seq(
    // entry index relative to the combined table; lanes that need no power use entry 0
    set(L.tableOffset, v128.and(i32x4.sub(i32x4.shrU(get(L.a), i32.const(LOW_BITS)), k('first')), get(L.need))),
    // in range iff no lane has bits at or above COMBINED_ENTRIES (negative differences wrap to huge)
    ifElse(i32.eqz(v128.anyTrue(i32x4.shrU(get(L.tableOffset), i32.const(COMBINED_BITS)))),
      [set(L.tableOffset, i32x4.shl(get(L.tableOffset), i32.const(4))), ...both(true)],
      [
        set(L.tableOffset, i32x4.shl(v128.and(i32x4.shrU(get(L.a), i32.const(LOW_BITS)), k('tableMask')), i32.const(4))),
        set(L.exponentOffset, i32x4.shl(i32x4.shrU(get(L.a), i32.const(23)), i32.const(3))),
        ...both(false),
      ]),
  );
}

/**
 * From w, sv (s), zv (z) to c = W_q − (W − W_e)·s and a = |W − W_r| (optimize-js.ts, per element).
 * Lanes below SHRINK_ZERO_BELOW get W_e = 0, so c = W_q − W·s; the power runs only when a lane needs it.
 */
function element(L: ElementLocals): Code {
  const shrunk = v128.and(v128.or(v128.and(get(L.xe), get(L.k.sign)), f32x4.pmax(f32x4.sub(get(L.a), f32x4.mul(get(L.p), get(L.k.tenth))), ZERO)), get(L.need));
  return seq(
    set(L.ws, f32x4.mul(get(L.w), get(L.sv))),
    set(L.q, f32x4.pmin(f32x4.pmax(f32x4.nearest(f32x4.add(get(L.ws), get(L.zv))), ZERO), get(L.maxCode))),
    set(L.xe, f32x4.sub(get(L.w), (VARIANT.noDiv ? f32x4.mul : f32x4.div)(f32x4.sub(get(L.q), get(L.zv)), get(L.sv)))),
    set(L.a, f32x4.abs(get(L.xe))),
    set(L.need, f32x4.ge(get(L.a), get(L.k.skip))),
    ifElse(v128.anyTrue(get(L.need)),
      [VARIANT.noPow ? set(L.p, get(L.a)) : powVector(L), set(L.c, f32x4.sub(get(L.q), f32x4.mul(f32x4.sub(get(L.w), shrunk), get(L.sv))))],
      [set(L.c, f32x4.sub(get(L.q), get(L.ws)))]),
  );
}

/** The final code of each lane: clamp(round(W·s + z)) as 4 bytes at `addr`. */
function storeCodes(L: ElementLocals, addr: Code): Code {
  const q = f32x4.pmin(f32x4.pmax(f32x4.nearest(f32x4.add(f32x4.mul(get(L.w), get(L.sv)), get(L.zv))), ZERO), get(L.maxCode));
  const ints = i32x4.truncSatF32x4U(q);
  const shorts = i16x8.narrowI32x4U(ints, ints);
  return v128.store32Lane0(addr, i8x16.narrowI16x8U(shorts, shorts));
}

const add = (a: Code, b: Code): Code => f32x4.add(a, b);

/**
 * torch's final combine of 32 slots (8 v128, slot 4v+l) into one float32: the 4 AVX2 accumulators
 * of a row are added in order (`row_sum`), then the 8 lanes left to right (`vectorized_inner_sum`).
 */
function combineSlots(slots: readonly Code[]): Code {
  const low = add(add(add(slots[0]!, slots[2]!), slots[4]!), slots[6]!);
  const high = add(add(add(slots[1]!, slots[3]!), slots[5]!), slots[7]!);
  let sum = f32.const(0);
  for (const half of [low, high]) {
    for (let lane = 0; lane < 4; lane++) sum = f32.add(sum, f32x4.extractLane(half, lane));
  }
  return sum;
}

const levelAddr = (level: number, slot: number): number => ERROR_STATE + level * 128 + slot * 16;

/** acc[level] += acc[level − 1]; acc[level − 1] = 0 for the 32 error slots held in memory. */
function pushErrorLevel(level: number): Code {
  const parts: Code[] = [];
  for (let s = 0; s < SLOTS; s++) {
    parts.push(v128.store(i32.const(0), add(v128.load(i32.const(0), levelAddr(level, s)), v128.load(i32.const(0), levelAddr(level - 1, s))), levelAddr(level, s)));
    parts.push(v128.store(i32.const(0), ZERO, levelAddr(level - 1, s)));
  }
  return seq(...parts);
}

function zeroErrorState(fromLevel: number): Code {
  const parts: Code[] = [];
  for (let level = fromLevel; level < 4; level++) {
    for (let s = 0; s < SLOTS; s++) parts.push(v128.store(i32.const(0), ZERO, levelAddr(level, s)));
  }
  return seq(...parts);
}

/** The `multi_row_sum` level cascade after a completed row `row` (1-based count), levels ≥ 2 by mask. */
function cascadePush(row: Local, mask: Local, power: Local, pushLevel: (level: number) => Code): Code {
  const maskAt = (level: number): Code => i32.shl(get(mask), i32.mul(get(power), i32.const(level)));
  return ifThen(i32.eqz(i32.and(get(row), get(mask))),
    pushLevel(1),
    ifThen(i32.eqz(i32.and(get(row), maskAt(1))),
      pushLevel(2),
      ifThen(i32.eqz(i32.and(get(row), maskAt(2))), pushLevel(3))));
}

/**
 * One optimizer step for axis 1 (contiguous groups of g = 32·k < 512 elements, N a multiple of 64):
 * params (pW, pS, pZ, runs, runsPerGroup, runsPerHalf, errorLevelPower, maxCode f32, groupSize f32).
 * A "run" is 32 elements: one row of torch's 4 × 8-lane accumulators, for the group mean and for the
 * error mean alike. Writes each group's new z and each half's error sum (ERROR_OUT).
 */
function stepContiguous(): FunctionBuilder {
  const I = ValType.I32;
  const fb = new FunctionBuilder('stepContiguous', [I, I, I, I, I, I, I, ValType.F32, ValType.F32], []);
  const [pW, pS, pZ, runs, runsPerGroup, runsPerHalf, power, maxCode, groupSize] = fb.params as [Local, Local, Local, Local, Local, Local, Local, Local, Local];
  const L = elementLocals(fb);
  const z = Array.from({ length: SLOTS }, () => fb.local(ValType.V128));
  const e = Array.from({ length: SLOTS }, () => fb.local(ValType.V128));
  const ptr = fb.local(I);
  const run = fb.local(I);
  const runInGroup = fb.local(I);
  const runInHalf = fb.local(I);
  const group = fb.local(I);
  const half = fb.local(I);
  const mask = fb.local(I);

  const loadGroup = seq(
    set(L.sv, f32x4.splat(f32.load(i32.add(get(pS), i32.shl(get(group), i32.const(2)))))),
    set(L.zv, f32x4.splat(f32.load(i32.add(get(pZ), i32.shl(get(group), i32.const(2)))))),
  );
  const body: Code[] = [];
  for (let v = 0; v < SLOTS; v++) {
    if (VARIANT.memoryAcc) {
      body.push(set(L.w, v128.load(get(ptr), v * 16)), element(L),
        v128.store(i32.const(0), add(v128.load(i32.const(0), ZACC + v * 16), get(L.c)), ZACC + v * 16),
        v128.store(i32.const(0), add(v128.load(i32.const(0), levelAddr(0, v)), get(L.a)), levelAddr(0, v)));
    } else {
      body.push(set(L.w, v128.load(get(ptr), v * 16)), element(L),
        set(z[v]!, add(get(z[v]!), get(L.c))), set(e[v]!, add(get(e[v]!), get(L.a))));
    }
  }
  const pushLevel = (level: number): Code => level === 1 && !VARIANT.memoryAcc
    ? seq(...e.map((acc, s) => seq(
      v128.store(i32.const(0), add(v128.load(i32.const(0), levelAddr(1, s)), get(acc)), levelAddr(1, s)),
      set(acc, ZERO))))
    : pushErrorLevel(level);
  const loadZ = VARIANT.memoryAcc ? seq(...z.map((acc, v) => seq(set(acc, v128.load(i32.const(0), ZACC + v * 16)), v128.store(i32.const(0), ZERO, ZACC + v * 16)))) : seq();
  const loadE = VARIANT.memoryAcc ? seq(...e.map((acc, v) => seq(set(acc, v128.load(i32.const(0), levelAddr(0, v))), v128.store(i32.const(0), ZERO, levelAddr(0, v))))) : seq();
  const finishGroup = seq(
    loadZ,
    f32.store(i32.add(get(pZ), i32.shl(get(group), i32.const(2))), f32.div(combineSlots(z.map((acc) => get(acc))), get(groupSize))),
    ...z.map((acc) => set(acc, ZERO)),
    set(group, i32.add(get(group), i32.const(1))),
    set(runInGroup, i32.const(0)),
    ifThen(i32.ltU(get(run), get(runs)), loadGroup),
  );
  const finishHalf = seq(
    loadE,
    ...e.map((acc, s) => set(acc, add(add(add(get(acc), v128.load(i32.const(0), levelAddr(1, s))), v128.load(i32.const(0), levelAddr(2, s))), v128.load(i32.const(0), levelAddr(3, s))))),
    f32.store(i32.add(i32.const(ERROR_OUT), i32.shl(get(half), i32.const(2))), combineSlots(e.map((acc) => get(acc)))),
    ...e.map((acc) => set(acc, ZERO)),
    zeroErrorState(1),
    set(half, i32.add(get(half), i32.const(1))),
    set(runInHalf, i32.const(0)),
  );
  fb.emit(
    initConstants(L, maxCode),
    set(mask, i32.sub(i32.shl(i32.const(1), get(power)), i32.const(1))),
    zeroErrorState(0),
    ...[0,1,2,3,4,5,6,7].map((v) => v128.store(i32.const(0), ZERO, ZACC + v * 16)),
    set(ptr, get(pW)),
    loadGroup,
    block(loop(
      ...body,
      set(ptr, i32.add(get(ptr), i32.const(128))),
      set(run, i32.add(get(run), i32.const(1))),
      set(runInGroup, i32.add(get(runInGroup), i32.const(1))),
      set(runInHalf, i32.add(get(runInHalf), i32.const(1))),
      cascadePush(runInHalf, mask, power, pushLevel),
      ifThen(i32.eq(get(runInGroup), get(runsPerGroup)), finishGroup),
      ifThen(i32.eq(get(runInHalf), get(runsPerHalf)), finishHalf),
      brIf(0, i32.ltU(get(run), get(runs))),
    )),
  );
  return fb;
}

/**
 * One optimizer step for axis 0 (groups are the columns of `[rows, cols]`, cols a multiple of 4,
 * N a multiple of 64): params (pW, pS, pZ, pColumns, rows, cols, vectorsPerHalf, errorLevelPower,
 * columnLevelPower, maxCode f32). Sweeps the grid in flat order; per column it keeps the 4-level
 * `multi_row_sum` cascade at pColumns + level·cols·4 and leaves each column's cascade sum at level 0.
 * Columns that torch sums with `row_sum` are redone by `ilpColumns`.
 */
function stepStrided(): FunctionBuilder {
  const I = ValType.I32;
  const fb = new FunctionBuilder('stepStrided', [I, I, I, I, I, I, I, I, I, ValType.F32], []);
  const [pW, pS, pZ, pCols, rows, cols, vectorsPerHalf, power, columnPower, maxCode] = fb.params as [Local, Local, Local, Local, Local, Local, Local, Local, Local, Local];
  const L = elementLocals(fb);
  const ptr = fb.local(I);
  const offset = fb.local(I);
  const rowBytes = fb.local(I);
  const levelBytes = fb.local(I);
  const row = fb.local(I);
  const vector = fb.local(I);
  const run = fb.local(I);
  const half = fb.local(I);
  const mask = fb.local(I);
  const columnMask = fb.local(I);
  const slot = fb.local(I);
  const acc = Array.from({ length: SLOTS }, () => fb.local(ValType.V128));

  const columnAddr = (level: number): Code => i32.add(i32.add(get(pCols), get(offset)), i32.mul(get(levelBytes), i32.const(level)));
  const overColumns = (...inner: Code[]): Code => seq(
    set(offset, i32.const(0)),
    block(loop(
      brIf(1, i32.geU(get(offset), get(rowBytes))),
      ...inner,
      set(offset, i32.add(get(offset), i32.const(16))),
      br(0),
    )),
  );
  const pushColumnLevel = (level: number): Code => overColumns(
    v128.store(columnAddr(level), add(v128.load(columnAddr(level)), v128.load(columnAddr(level - 1)))),
    v128.store(columnAddr(level - 1), ZERO),
  );
  const finishHalf = seq(
    ...acc.map((a, s) => set(a, add(add(add(v128.load(i32.const(0), levelAddr(0, s)), v128.load(i32.const(0), levelAddr(1, s))), v128.load(i32.const(0), levelAddr(2, s))), v128.load(i32.const(0), levelAddr(3, s))))),
    f32.store(i32.add(i32.const(ERROR_OUT), i32.shl(get(half), i32.const(2))), combineSlots(acc.map((a) => get(a)))),
    zeroErrorState(0),
    set(half, i32.add(get(half), i32.const(1))),
    set(vector, i32.const(0)),
  );
  fb.emit(
    initConstants(L, maxCode),
    set(rowBytes, i32.shl(get(cols), i32.const(2))),
    set(levelBytes, get(rowBytes)),
    set(mask, i32.sub(i32.shl(i32.const(1), get(power)), i32.const(1))),
    set(columnMask, i32.sub(i32.shl(i32.const(1), get(columnPower)), i32.const(1))),
    zeroErrorState(0),
    overColumns(...[0, 1, 2, 3].map((level) => v128.store(columnAddr(level), ZERO))),
    set(ptr, get(pW)),
    block(loop(
      set(offset, i32.const(0)),
      block(loop(
        set(L.w, v128.load(i32.add(get(ptr), get(offset)))),
        set(L.sv, v128.load(i32.add(get(pS), get(offset)))),
        set(L.zv, v128.load(i32.add(get(pZ), get(offset)))),
        element(L),
        v128.store(columnAddr(0), add(v128.load(columnAddr(0)), get(L.c))),
        set(slot, i32.add(i32.const(ERROR_STATE), i32.shl(i32.and(get(vector), i32.const(SLOTS - 1)), i32.const(4)))),
        v128.store(get(slot), add(v128.load(get(slot)), get(L.a))),
        set(vector, i32.add(get(vector), i32.const(1))),
        ifThen(i32.eqz(i32.and(get(vector), i32.const(SLOTS - 1))),
          set(run, i32.shrU(get(vector), i32.const(3))),
          cascadePush(run, mask, power, pushErrorLevel),
          ifThen(i32.eq(get(vector), get(vectorsPerHalf)), finishHalf)),
        set(offset, i32.add(get(offset), i32.const(16))),
        brIf(0, i32.ltU(get(offset), get(rowBytes))),
      )),
      set(ptr, i32.add(get(ptr), get(rowBytes))),
      set(row, i32.add(get(row), i32.const(1))),
      cascadePush(row, columnMask, columnPower, pushColumnLevel),
      brIf(0, i32.ltU(get(row), get(rows))),
    )),
    overColumns(v128.store(columnAddr(0), add(add(add(v128.load(columnAddr(0)), v128.load(columnAddr(1))), v128.load(columnAddr(2))), v128.load(columnAddr(3))))),
  );
  return fb;
}

/**
 * torch's `row_sum` of the columns [begin, end) of `[rows, cols]` (4 interleaved cascades over rows
 * 4i + k, then leftover rows into lane 0, then lanes 0..3): params (pW, pS, pZ, pSums, rows, cols,
 * begin, end, levelPower, maxCode f32). Lane k of the vector holds row 4i + k of the column.
 */
function ilpColumns(): FunctionBuilder {
  const I = ValType.I32;
  const fb = new FunctionBuilder('ilpColumns', [I, I, I, I, I, I, I, I, I, ValType.F32], []);
  const [pW, pS, pZ, pSums, rows, cols, begin, end, power, maxCode] = fb.params as [Local, Local, Local, Local, Local, Local, Local, Local, Local, Local];
  const L = elementLocals(fb);
  const column = fb.local(I);
  const rowBytes = fb.local(I);
  const base = fb.local(I);
  const ilpRow = fb.local(I);
  const ilpRows = fb.local(I);
  const mask = fb.local(I);
  const leftover = fb.local(I);
  const sum = fb.local(ValType.F32);
  const levels = Array.from({ length: 4 }, () => fb.local(ValType.V128));

  const gatherRows = (count: number | undefined): Code => {
    // lanes k < count hold rows 4i + k of the column (base points at row 4i); others stay 0
    const parts: Code[] = [set(L.w, f32x4.splat(f32.load(get(base))))];
    for (let k = 1; k < 4; k++) {
      const lane = set(L.w, f32x4.replaceLane(get(L.w), k, f32.load(i32.add(get(base), i32.mul(get(rowBytes), i32.const(k))))));
      parts.push(count === undefined ? lane : ifElse(i32.ltU(i32.const(k), get(leftover)), [lane], [set(L.w, f32x4.replaceLane(get(L.w), k, f32.const(0)))]));
    }
    return seq(...parts);
  };
  const pushLevel = (level: number): Code => seq(set(levels[level]!, add(get(levels[level]!), get(levels[level - 1]!))), set(levels[level - 1]!, ZERO));
  const leftoverLane = (k: number): Code => ifThen(i32.ltU(i32.const(k), get(leftover)),
    set(sum, f32.add(get(sum), f32x4.extractLane(get(L.c), k))));
  fb.emit(
    initConstants(L, maxCode),
    set(rowBytes, i32.shl(get(cols), i32.const(2))),
    set(ilpRows, i32.shrU(get(rows), i32.const(2))),
    set(leftover, i32.and(get(rows), i32.const(3))),
    set(mask, i32.sub(i32.shl(i32.const(1), get(power)), i32.const(1))),
    set(column, get(begin)),
    block(loop(
      brIf(1, i32.geU(get(column), get(end))),
      set(L.sv, f32x4.splat(f32.load(i32.add(get(pS), i32.shl(get(column), i32.const(2)))))),
      set(L.zv, f32x4.splat(f32.load(i32.add(get(pZ), i32.shl(get(column), i32.const(2)))))),
      ...levels.map((l) => set(l, ZERO)),
      set(base, i32.add(get(pW), i32.shl(get(column), i32.const(2)))),
      set(ilpRow, i32.const(0)),
      block(loop(
        brIf(1, i32.geU(get(ilpRow), get(ilpRows))),
        gatherRows(undefined),
        element(L),
        set(levels[0]!, add(get(levels[0]!), get(L.c))),
        set(ilpRow, i32.add(get(ilpRow), i32.const(1))),
        cascadePush(ilpRow, mask, power, pushLevel),
        set(base, i32.add(get(base), i32.shl(get(rowBytes), i32.const(2)))),
        br(0),
      )),
      set(levels[0]!, add(add(add(get(levels[0]!), get(levels[1]!)), get(levels[2]!)), get(levels[3]!))),
      set(sum, f32x4.extractLane(get(levels[0]!), 0)),
      ifThen(i32.ne(get(leftover), i32.const(0)),
        gatherRows(3),
        element(L),
        leftoverLane(0), leftoverLane(1), leftoverLane(2)),
      set(sum, f32.add(f32.add(f32.add(get(sum), f32x4.extractLane(get(levels[0]!), 1)), f32x4.extractLane(get(levels[0]!), 2)), f32x4.extractLane(get(levels[0]!), 3))),
      f32.store(i32.add(get(pSums), i32.shl(get(column), i32.const(2))), get(sum)),
      set(column, i32.add(get(column), i32.const(1))),
      br(0),
    )),
  );
  return fb;
}

/** Final codes for axis 1: params (pW, pS, pZ, pCodes, groups, groupSize, maxCode f32). */
function codesContiguous(): FunctionBuilder {
  const I = ValType.I32;
  const fb = new FunctionBuilder('codesContiguous', [I, I, I, I, I, I, ValType.F32], []);
  const [pW, pS, pZ, pCodes, groups, groupSize, maxCode] = fb.params as [Local, Local, Local, Local, Local, Local, Local];
  const L = elementLocals(fb);
  const group = fb.local(I);
  const index = fb.local(I);
  const end = fb.local(I);
  fb.emit(
    initConstants(L, maxCode),
    block(loop(
      brIf(1, i32.geU(get(group), get(groups))),
      set(L.sv, f32x4.splat(f32.load(i32.add(get(pS), i32.shl(get(group), i32.const(2)))))),
      set(L.zv, f32x4.splat(f32.load(i32.add(get(pZ), i32.shl(get(group), i32.const(2)))))),
      set(end, i32.add(get(index), get(groupSize))),
      block(loop(
        brIf(1, i32.geU(get(index), get(end))),
        set(L.w, v128.load(i32.add(get(pW), i32.shl(get(index), i32.const(2))))),
        storeCodes(L, i32.add(get(pCodes), get(index))),
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
function codesStrided(): FunctionBuilder {
  const I = ValType.I32;
  const fb = new FunctionBuilder('codesStrided', [I, I, I, I, I, I, ValType.F32], []);
  const [pW, pS, pZ, pCodes, rows, cols, maxCode] = fb.params as [Local, Local, Local, Local, Local, Local, Local];
  const L = elementLocals(fb);
  const row = fb.local(I);
  const column = fb.local(I);
  const index = fb.local(I);
  fb.emit(
    initConstants(L, maxCode),
    block(loop(
      brIf(1, i32.geU(get(row), get(rows))),
      set(column, i32.const(0)),
      block(loop(
        brIf(1, i32.geU(get(column), get(cols))),
        set(L.w, v128.load(i32.add(get(pW), i32.shl(get(index), i32.const(2))))),
        set(L.sv, v128.load(i32.add(get(pS), i32.shl(get(column), i32.const(2))))),
        set(L.zv, v128.load(i32.add(get(pZ), i32.shl(get(column), i32.const(2))))),
        storeCodes(L, i32.add(get(pCodes), get(index))),
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
function rangeContiguous(): FunctionBuilder {
  const I = ValType.I32;
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
function rangeStrided(): FunctionBuilder {
  const I = ValType.I32;
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
function packPlanes(): FunctionBuilder {
  const I = ValType.I32;
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
 * float32 dequantization `fround(fround(code − zero) · scale)` straight from uint8 packed planes:
 * params (pPacked, pScale, pZero, pOut, planeRows, cols, planes, nbits, axis). Output row
 * k·planeRows + r comes from packed row r at bit 8 − nbits·(k + 1); cols a multiple of 4.
 */
function dequantize(): FunctionBuilder {
  const I = ValType.I32;
  const fb = new FunctionBuilder('dequantize', [I, I, I, I, I, I, I, I, I], []);
  const [pPacked, pScale, pZero, pOut, planeRows, cols, planes, nbits, axis] = fb.params as [Local, Local, Local, Local, Local, Local, Local, Local, Local];
  const plane = fb.local(I);
  const row = fb.local(I);
  const column = fb.local(I);
  const shift = fb.local(I);
  const mask = fb.local(ValType.V128);
  const source = fb.local(I);
  const target = fb.local(I);
  const outRow = fb.local(I);
  const sv = fb.local(ValType.V128);
  const zv = fb.local(ValType.V128);
  const codes = fb.local(ValType.V128);
  const groupParam = (base: Local): Code => f32x4.splat(f32.load(i32.add(get(base), i32.shl(get(outRow), i32.const(2)))));
  const columnParam = (base: Local): Code => v128.load(i32.add(get(base), i32.shl(get(column), i32.const(2))));
  fb.emit(
    block(loop(
      brIf(1, i32.geU(get(plane), get(planes))),
      set(shift, i32.sub(i32.const(8), i32.mul(get(nbits), i32.add(get(plane), i32.const(1))))),
      set(mask, i8x16.splat(i32.sub(i32.shl(i32.const(1), get(nbits)), i32.const(1)))),
      set(row, i32.const(0)),
      block(loop(
        brIf(1, i32.geU(get(row), get(planeRows))),
        set(outRow, i32.add(i32.mul(get(plane), get(planeRows)), get(row))),
        set(source, i32.add(get(pPacked), i32.mul(get(row), get(cols)))),
        set(target, i32.add(get(pOut), i32.shl(i32.mul(get(outRow), get(cols)), i32.const(2)))),
        ifThen(i32.eq(get(axis), i32.const(1)), set(sv, groupParam(pScale)), set(zv, groupParam(pZero))),
        set(column, i32.const(0)),
        block(loop(
          brIf(1, i32.geU(get(column), get(cols))),
          set(codes, i32x4.extendLowI16x8U(i16x8.extendLowI8x16U(v128.and(i8x16.shrU(v128.load32Zero(i32.add(get(source), get(column))), get(shift)), get(mask))))),
          ifThen(i32.eqz(get(axis)), set(sv, columnParam(pScale)), set(zv, columnParam(pZero))),
          v128.store(i32.add(get(target), i32.shl(get(column), i32.const(2))),
            f32x4.mul(f32x4.sub(f32x4.convertI32x4U(get(codes)), get(zv)), get(sv))),
          set(column, i32.add(get(column), i32.const(4))),
          br(0),
        )),
        set(row, i32.add(get(row), i32.const(1))),
        br(0),
      )),
      set(plane, i32.add(get(plane), i32.const(1))),
      br(0),
    )),
  );
  return fb;
}

/** The module's bytes; the power tables are copied into memory by the caller (`writePowTables`). */
export function hqqKernelModuleBytes(): Uint8Array {
  return encodeModule([
    stepContiguous(), stepStrided(), ilpColumns(), codesContiguous(), codesStrided(),
    rangeContiguous(), rangeStrided(), packPlanes(), dequantize(),
  ], 1);
}

export function writePowTables(memory: ArrayBuffer): void {
  const { mantissa, exponent } = POW_TABLES;
  new Float64Array(memory, TABLE_MANTISSA, mantissa.length).set(mantissa);
  new Float64Array(memory, TABLE_EXPONENT, exponent.length).set(exponent);
  const combined = new Float64Array(memory, TABLE_COMBINED, 2 * COMBINED_ENTRIES);
  const perExponent = 1 << POW_TABLE_BITS;
  for (let i = 0; i < COMBINED_ENTRIES; i++) {
    const j = i % perExponent;
    combined[2 * i] = mantissa[2 * j]! * exponent[COMBINED_FIRST_EXPONENT + Math.floor(i / perExponent)]!;
    combined[2 * i + 1] = mantissa[2 * j + 1]!;
  }
}
