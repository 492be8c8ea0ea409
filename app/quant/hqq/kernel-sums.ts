import { f32, f32x4, get, i32, ifThen, seq, v128 } from '../../wasm/wasm-encoder.js';
import type { Code, Local } from '../../wasm/wasm-encoder.js';
import { ZERO } from './kernel-element.js';

/**
 * torch's float32 summation order (torch-sum.ts) laid out for the kernels. One torch "row" is 32
 * elements: 4 AVX2 vectors × 8 lanes, i.e. 8 v128 slots (slot v holds elements 4v..4v+3). Slots are
 * added row after row (`multi_row_sum`, levels of 2^power rows), then combined: the 4 AVX2
 * accumulators in order (`row_sum`), then the 8 lanes left to right (`vectorized_inner_sum`).
 * Slot state lives in the calling thread's scratch (kernel-layout.ts `threadState`), addressed as
 * `state + at`: one level is 8 slots = 128 bytes.
 */
export const SLOTS = 8;
const LEVEL_BYTES = SLOTS * 16;

/** Byte offset of slot `slot` of level `level` of the sums at `at`. */
export function slotOffset(at: number, level: number, slot: number): number {
  return at + level * LEVEL_BYTES + slot * 16;
}

/** memory[state + offset] += value */
export function accumulate(state: Local, offset: number, value: Code): Code {
  return v128.store(get(state), f32x4.add(v128.load(get(state), offset), value), offset);
}

/** memory[addr + offset] += value, addr computed */
export function accumulateAt(addr: Code, value: Code, offset = 0): Code {
  return v128.store(addr, f32x4.add(v128.load(addr, offset), value), offset);
}

export function zeroLevels(state: Local, at: number, levels: number): Code {
  const parts: Code[] = [];
  for (let level = 0; level < levels; level++) {
    for (let s = 0; s < SLOTS; s++) parts.push(v128.store(get(state), ZERO, slotOffset(at, level, s)));
  }
  return seq(...parts);
}

/** level += level − 1; level − 1 = 0, for the 8 slots of the levels at `at` */
export function pushLevel(state: Local, at: number, level: number): Code {
  const parts: Code[] = [];
  for (let s = 0; s < SLOTS; s++) {
    parts.push(accumulate(state, slotOffset(at, level, s), v128.load(get(state), slotOffset(at, level - 1, s))));
    parts.push(v128.store(get(state), ZERO, slotOffset(at, level - 1, s)));
  }
  return seq(...parts);
}

/**
 * `multi_row_sum`'s push after `row` completed rows (a 1-based count): every 2^power rows level 0
 * moves into level 1, every 2^(2·power) rows level 1 into level 2, and so on.
 */
export function cascadePush(row: Local, mask: Local, power: Local, push: (level: number) => Code): Code {
  const maskAt = (level: number): Code => i32.shl(get(mask), i32.mul(get(power), i32.const(level)));
  return ifThen(i32.eqz(i32.and(get(row), get(mask))),
    push(1),
    ifThen(i32.eqz(i32.and(get(row), maskAt(1))),
      push(2),
      ifThen(i32.eqz(i32.and(get(row), maskAt(2))), push(3))));
}

/** The float32 total of 8 slots (see the file comment for the order). */
export function combineSlots(slots: readonly Code[]): Code {
  const add = f32x4.add;
  const low = add(add(add(slots[0]!, slots[2]!), slots[4]!), slots[6]!);
  const high = add(add(add(slots[1]!, slots[3]!), slots[5]!), slots[7]!);
  let sum = f32.const(0);
  for (const half of [low, high]) {
    for (let lane = 0; lane < 4; lane++) sum = f32.add(sum, f32x4.extractLane(half, lane));
  }
  return sum;
}

/** The float32 total of `levels` cascade levels at `at`: per slot ((L0 + L1) + L2) + L3, then combined. */
export function combineLevels(state: Local, at: number, levels: number): Code {
  const slots: Code[] = [];
  for (let s = 0; s < SLOTS; s++) {
    let slot = v128.load(get(state), slotOffset(at, 0, s));
    for (let level = 1; level < levels; level++) slot = f32x4.add(slot, v128.load(get(state), slotOffset(at, level, s)));
    slots.push(slot);
  }
  return combineSlots(slots);
}
