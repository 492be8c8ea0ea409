import { ValType, f32x4, f64x2, get, i16x8, i32, i32x4, i8x16, ifElse, seq, set, v128 } from '../../wasm/wasm-encoder.js';
import type { Code, FunctionBuilder, Local } from '../../wasm/wasm-encoder.js';
import { POW_TABLES, POW_TABLE_BITS, SHRINK_WEIGHT, SHRINK_ZERO_BELOW } from './shrink.js';
import { COMBINED_BITS, COMBINED_FIRST_EXPONENT, TABLE_COMBINED, TABLE_EXPONENT, TABLE_MANTISSA } from './kernel-layout.js';

/**
 * The per-element work of one optimizer step, four lanes at a time, as WebAssembly code: exactly the
 * float32 operations of optimize-js.ts and the float64 operations of shrink.ts `shrinkPow`, in the
 * same order, so both engines produce identical bits (spec §3.2 step 3).
 */
const LOW_BITS = 23 - POW_TABLE_BITS;
const LOW_HALF = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
const HIGH_HALF = [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31];

export const ZERO = v128.i32x4Const(0, 0, 0, 0);

type ConstantName = 'one' | 'c1' | 'c2' | 'c3' | 'c4' | 'sign' | 'skip' | 'tenth' | 'lowMask' | 'tableMask' | 'first';

/** The locals of one four-lane slot. */
export interface SlotLocals {
  /** inputs: W of four elements, and the code that reads their s and z (a local, or memory) */
  readonly w: Local;
  readonly s: Code;
  readonly z: Code;
  /** outputs: c = W_q − (W − W_e)·s and a = |W − W_r| */
  readonly c: Local;
  readonly a: Local;
  readonly ws: Local;
  readonly q: Local;
  readonly xe: Local;
  readonly need: Local;
  readonly p: Local;
  readonly tableOffset: Local;
  readonly exponentOffset: Local;
}

/** The locals one kernel function needs for `elements` and `storeCodes`. */
export interface ElementLocals {
  readonly slots: readonly SlotLocals[];
  readonly maxCode: Local;
  /** i32: how many slots (vectors) so far had a lane that needed the power (set to 0 by `initElement`) */
  readonly powerVectors: Local;
  /** temporaries of one lane pair of the power */
  readonly entries0: Local;
  readonly entries1: Local;
  readonly r: Local;
  readonly r2: Local;
  /** constants, set once per call by `initElement` (a v128.const inside a loop is rebuilt at every use) */
  readonly k: Readonly<Record<ConstantName, Local>>;
}

function splat64(v: number): Code {
  return v128.const([...new Uint8Array(new Float64Array([v, v]).buffer)]);
}

function splat32(v: number): Code {
  return v128.i32x4Const(v, v, v, v);
}

function constantValues(): Record<ConstantName, Code> {
  const [c1, c2, c3, c4] = POW_TABLES.coefficients;
  return {
    one: splat64(1), c1: splat64(c1), c2: splat64(c2), c3: splat64(c3), c4: splat64(c4),
    sign: splat32(-0x80000000),
    skip: v128.f32x4Const(SHRINK_ZERO_BELOW, SHRINK_ZERO_BELOW, SHRINK_ZERO_BELOW, SHRINK_ZERO_BELOW),
    tenth: v128.f32x4Const(SHRINK_WEIGHT, SHRINK_WEIGHT, SHRINK_WEIGHT, SHRINK_WEIGHT),
    lowMask: splat32((1 << LOW_BITS) - 1),
    tableMask: splat32((1 << POW_TABLE_BITS) - 1),
    first: splat32(COMBINED_FIRST_EXPONENT << POW_TABLE_BITS),
  };
}

/** The kernel-wide locals around `slots` (made by `slotLocals`). */
export function elementLocals(fb: FunctionBuilder, slots: readonly SlotLocals[]): ElementLocals {
  const v = (): Local => fb.local(ValType.V128);
  const names = Object.keys(constantValues()) as ConstantName[];
  return {
    slots, maxCode: v(), powerVectors: fb.local(ValType.I32), entries0: v(), entries1: v(), r: v(), r2: v(),
    k: Object.fromEntries(names.map((name) => [name, v()])) as Record<ConstantName, Local>,
  };
}

/** Where slot `index` of a kernel reads its s and z. */
export type SlotParams = (index: number) => { readonly s: Code; readonly z: Code };

/** `count` slots for `elementLocals`, or for a kernel's second loop of another width. */
export function slotLocals(fb: FunctionBuilder, count: number, params: SlotParams): SlotLocals[] {
  const v = (): Local => fb.local(ValType.V128);
  return Array.from({ length: count }, (_, i): SlotLocals => ({
    w: v(), ...params(i), c: v(), a: v(), ws: v(), q: v(), xe: v(), need: v(), p: v(), tableOffset: v(), exponentOffset: v(),
  }));
}

/** Slots that all read s and z from the locals `sv` and `zv` (set by the kernel). */
export function sharedParams(sv: Local, zv: Local): SlotParams {
  return () => ({ s: get(sv), z: get(zv) });
}

/** Sets the constants and splats the f32 parameter `maxCode`. */
export function initElement(L: ElementLocals, maxCode: Local): Code {
  const values = constantValues();
  return seq(
    set(L.maxCode, f32x4.splat(get(maxCode))),
    set(L.powerVectors, i32.const(0)),
    ...(Object.keys(values) as ConstantName[]).map((name) => set(L.k[name], values[name])),
  );
}

/** The OR of the slots' vectors */
function anyOf(slots: readonly SlotLocals[], vector: (slot: SlotLocals) => Code): Code {
  return slots.map(vector).reduce((x, y) => v128.or(x, y));
}

/**
 * `shrinkPow` of the four lanes of `S.a` into `S.p`, two lanes per f64x2. Table entries are fetched
 * per lane (WebAssembly has no gather). When every lane that needs the power lies in
 * TABLE_COMBINED's range, one entry per lane replaces two lookups and a product (the same value:
 * the table holds that product).
 */
function powSlot(L: ElementLocals, S: SlotLocals, combined: boolean): Code {
  const k = (name: ConstantName): Code => get(L.k[name]);
  const pair = (low: number): Code => {
    const entry = (lane: number): Code => v128.load(i32x4.extractLane(get(S.tableOffset), lane), combined ? TABLE_COMBINED : TABLE_MANTISSA);
    const r = get(L.r);
    const r2 = get(L.r2);
    // Estrin's scheme, as shrinkPow: (1 + c1·r) + r²·((c2 + c3·r) + r²·c4)
    const series = f64x2.add(f64x2.add(k('one'), f64x2.mul(k('c1'), r)),
      f64x2.mul(r2, f64x2.add(f64x2.add(k('c2'), f64x2.mul(k('c3'), r)), f64x2.mul(r2, k('c4')))));
    const power = v128.shuffle(get(L.entries0), get(L.entries1), LOW_HALF);
    const scaled = combined ? power : f64x2.mul(power, v128.load64Lane(i32x4.extractLane(get(S.exponentOffset), low + 1),
      v128.load64Zero(i32x4.extractLane(get(S.exponentOffset), low), TABLE_EXPONENT), 1, TABLE_EXPONENT));
    const lowBits = v128.and(get(S.a), k('lowMask'));
    const d = f64x2.convertLowI32x4S(low === 0 ? lowBits : v128.shuffle(lowBits, lowBits, HIGH_HALF));
    return seq(
      set(L.entries0, entry(low)),
      set(L.entries1, entry(low + 1)),
      set(L.r, f64x2.mul(d, v128.shuffle(get(L.entries0), get(L.entries1), HIGH_HALF))),
      set(L.r2, f64x2.mul(get(L.r), get(L.r))),
      f32x4.demoteF64x2Zero(f64x2.mul(scaled, series)),
    );
  };
  const offsets = combined
    ? [set(S.tableOffset, i32x4.shl(get(S.tableOffset), i32.const(4)))]
    : [
        set(S.tableOffset, i32x4.shl(v128.and(i32x4.shrU(get(S.a), i32.const(LOW_BITS)), k('tableMask')), i32.const(4))),
        set(S.exponentOffset, i32x4.shl(i32x4.shrU(get(S.a), i32.const(23)), i32.const(3))),
      ];
  return seq(...offsets, set(S.p, pair(0)), set(S.p, v128.shuffle(get(S.p), pair(2), LOW_HALF)));
}

/** `powSlot` for every slot, through the combined table when every slot's lanes lie in its range. */
function powSlots(L: ElementLocals, slots: readonly SlotLocals[]): Code {
  return seq(
    // entry index relative to the combined table; lanes that need no power use entry 0
    ...slots.map((S) => set(S.tableOffset, v128.and(i32x4.sub(i32x4.shrU(get(S.a), i32.const(LOW_BITS)), get(L.k.first)), get(S.need)))),
    // in range iff no lane has bits at or above COMBINED_ENTRIES (exponents below wrap to huge values)
    ifElse(i32.eqz(v128.anyTrue(i32x4.shrU(anyOf(slots, (S) => get(S.tableOffset)), i32.const(COMBINED_BITS)))),
      slots.map((S) => powSlot(L, S, true)),
      slots.map((S) => powSlot(L, S, false))),
  );
}

/** L.powerVectors += the slots with a lane that needs the power (inside the power branch: one slot does) */
function countPowerVectors(L: ElementLocals, slots: readonly SlotLocals[]): Code {
  const count = slots.length === 1 ? i32.const(1) : slots.map((S) => v128.anyTrue(get(S.need))).reduce((x, y) => i32.add(x, y));
  return set(L.powerVectors, i32.add(get(L.powerVectors), count));
}

/**
 * For every slot, from `w`, `s` and `z` to `c` = W_q − (W − W_e)·s and `a` = |W − W_r|.
 * Lanes below SHRINK_ZERO_BELOW get W_e = 0 (so c = W_q − W·s); the power runs only when a lane of
 * some slot needs it. The slots go through each stage together: their dependency chains are long
 * (a division, table fetches, the float64 series) and independent, and side by side the CPU
 * overlaps them. A lane's result is the same whichever slots it is computed with.
 */
export function elements(L: ElementLocals, slots: readonly SlotLocals[] = L.slots): Code {
  const shrunk = (S: SlotLocals): Code => v128.and(
    v128.or(v128.and(get(S.xe), get(L.k.sign)), f32x4.pmax(f32x4.sub(get(S.a), f32x4.mul(get(S.p), get(L.k.tenth))), ZERO)),
    get(S.need));
  return seq(
    ...slots.map((S) => set(S.ws, f32x4.mul(get(S.w), S.s))),
    ...slots.map((S) => set(S.q, f32x4.pmin(f32x4.pmax(f32x4.nearest(f32x4.add(get(S.ws), S.z)), ZERO), get(L.maxCode)))),
    ...slots.map((S) => set(S.xe, f32x4.sub(get(S.w), f32x4.div(f32x4.sub(get(S.q), S.z), S.s)))),
    ...slots.map((S) => set(S.a, f32x4.abs(get(S.xe)))),
    ...slots.map((S) => set(S.need, f32x4.ge(get(S.a), get(L.k.skip)))),
    ifElse(v128.anyTrue(anyOf(slots, (S) => get(S.need))),
      [powSlots(L, slots), countPowerVectors(L, slots), ...slots.map((S) => set(S.c, f32x4.sub(get(S.q), f32x4.mul(f32x4.sub(get(S.w), shrunk(S)), S.s))))],
      slots.map((S) => set(S.c, f32x4.sub(get(S.q), get(S.ws))))),
  );
}

/** The final codes clamp(round(W·s + z), 0, max_v) of the four lanes of `S`, as 4 bytes at `addr`. */
export function storeCodes(L: ElementLocals, S: SlotLocals, addr: Code): Code {
  const q = f32x4.pmin(f32x4.pmax(f32x4.nearest(f32x4.add(f32x4.mul(get(S.w), S.s), S.z)), ZERO), get(L.maxCode));
  const ints = i32x4.truncSatF32x4U(q);
  const shorts = i16x8.narrowI32x4U(ints, ints);
  return v128.store32Lane(addr, i8x16.narrowI16x8U(shorts, shorts), 0);
}
