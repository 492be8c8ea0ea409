import { FunctionBuilder, ValType, block, br, brIf, f32, f32x4, get, i32, ifElse, ifThen, loop, seq, set, v128 } from './wasm-builder.js';
import type { Code, Local } from './wasm-builder.js';
import { ERROR_OUT, ERROR_STATE, GROUP_STATE } from './kernel-layout.js';
import { ZERO, element, elementLocals, initElement } from './kernel-element.js';
import { SLOTS, accumulate, accumulateAt, cascadePush, combineLevels, pushLevel, slotAddress, zeroLevels } from './kernel-sums.js';

/**
 * The optimizer-step kernels (one `optimize_weights_proximal_legacy_step`, spec §3.2 step 3): the
 * element work of kernel-element.ts plus torch's sums (kernel-sums.ts) of c per group and of a over
 * the whole tensor, per thread chunk ("half": torch-sum.ts `fullSumChunks`).
 */
const I = ValType.I32;
const V = ValType.V128;

function params(fb: FunctionBuilder, count: number): Local[] {
  return fb.params.slice(0, count);
}

/** counter += 1 */
function increment(local: Local, by: Code = i32.const(1)): Code {
  return set(local, i32.add(get(local), by));
}

/**
 * Axis 1 (contiguous groups of g = 32·m < 512 elements; N a multiple of 64): params (pW, pS, pZ,
 * runs, runsPerGroup, runsPerHalf, errorLevelPower, maxCode f32, groupSize f32). A "run" is one torch
 * row of 32 elements, for the group mean and for the error mean alike. Writes every group's new z
 * and every half's error sum (ERROR_OUT).
 */
export function stepContiguous(): FunctionBuilder {
  const fb = new FunctionBuilder('stepContiguous', [I, I, I, I, I, I, I, ValType.F32, ValType.F32], []);
  const [pW, pS, pZ, runs, runsPerGroup, runsPerHalf, power, maxCode, groupSize] = params(fb, 9) as [Local, Local, Local, Local, Local, Local, Local, Local, Local];
  const L = elementLocals(fb);
  const ptr = fb.local(I);
  const run = fb.local(I);
  const runInGroup = fb.local(I);
  const runInHalf = fb.local(I);
  const group = fb.local(I);
  const half = fb.local(I);
  const mask = fb.local(I);

  const groupParam = (base: Local): Code => f32x4.splat(f32.load(i32.add(get(base), i32.shl(get(group), i32.const(2)))));
  const loadGroup = seq(set(L.sv, groupParam(pS)), set(L.zv, groupParam(pZ)));
  const body: Code[] = [];
  for (let v = 0; v < SLOTS; v++) {
    body.push(
      set(L.w, v128.load(get(ptr), v * 16)),
      element(L),
      accumulate(slotAddress(GROUP_STATE, 0, v), get(L.c)),
      accumulate(slotAddress(ERROR_STATE, 0, v), get(L.a)),
    );
  }
  const finishGroup = seq(
    f32.store(i32.add(get(pZ), i32.shl(get(group), i32.const(2))), f32.div(combineLevels(GROUP_STATE, 1), get(groupSize))),
    zeroLevels(GROUP_STATE, 1),
    increment(group),
    set(runInGroup, i32.const(0)),
    ifThen(i32.ltU(get(run), get(runs)), loadGroup),
  );
  const finishHalf = seq(
    f32.store(i32.add(i32.const(ERROR_OUT), i32.shl(get(half), i32.const(2))), combineLevels(ERROR_STATE, 4)),
    zeroLevels(ERROR_STATE, 4),
    increment(half),
    set(runInHalf, i32.const(0)),
  );
  fb.emit(
    initElement(L, maxCode),
    set(mask, i32.sub(i32.shl(i32.const(1), get(power)), i32.const(1))),
    zeroLevels(ERROR_STATE, 4),
    zeroLevels(GROUP_STATE, 1),
    set(ptr, get(pW)),
    loadGroup,
    block(loop(
      ...body,
      increment(ptr, i32.const(SLOTS * 16)),
      increment(run),
      increment(runInGroup),
      increment(runInHalf),
      cascadePush(runInHalf, mask, power, (level) => pushLevel(ERROR_STATE, level)),
      ifThen(i32.eq(get(runInGroup), get(runsPerGroup)), finishGroup),
      ifThen(i32.eq(get(runInHalf), get(runsPerHalf)), finishHalf),
      brIf(0, i32.ltU(get(run), get(runs))),
    )),
  );
  return fb;
}

/**
 * Axis 0 (groups are the columns of `[rows, cols]`; cols a multiple of 4, N a multiple of 64):
 * params (pW, pS, pZ, pColumns, rows, cols, vectorsPerHalf, errorLevelPower, columnLevelPower,
 * maxCode f32). Sweeps the grid in flat order. Per column it keeps the 4-level `multi_row_sum`
 * cascade at pColumns + level·cols·4 and leaves each column's cascade total at level 0; the columns
 * torch sums with `row_sum` are redone by `ilpColumns`.
 */
export function stepStrided(): FunctionBuilder {
  const fb = new FunctionBuilder('stepStrided', [I, I, I, I, I, I, I, I, I, ValType.F32], []);
  const [pW, pS, pZ, pColumns, rows, cols, vectorsPerHalf, power, columnPower, maxCode] = params(fb, 10) as [Local, Local, Local, Local, Local, Local, Local, Local, Local, Local];
  const L = elementLocals(fb);
  const ptr = fb.local(I);
  const offset = fb.local(I);
  const rowBytes = fb.local(I);
  const row = fb.local(I);
  const vector = fb.local(I);
  const run = fb.local(I);
  const half = fb.local(I);
  const mask = fb.local(I);
  const columnMask = fb.local(I);

  const columnAt = (level: number): Code => i32.add(i32.add(get(pColumns), get(offset)), i32.mul(get(rowBytes), i32.const(level)));
  const overColumns = (...inner: Code[]): Code => seq(
    set(offset, i32.const(0)),
    block(loop(brIf(1, i32.geU(get(offset), get(rowBytes))), ...inner, increment(offset, i32.const(16)), br(0))),
  );
  const pushColumns = (level: number): Code => overColumns(
    accumulateAt(columnAt(level), v128.load(columnAt(level - 1))),
    v128.store(columnAt(level - 1), ZERO),
  );
  const errorSlot = i32.add(i32.const(ERROR_STATE), i32.shl(i32.and(get(vector), i32.const(SLOTS - 1)), i32.const(4)));
  const finishHalf = seq(
    f32.store(i32.add(i32.const(ERROR_OUT), i32.shl(get(half), i32.const(2))), combineLevels(ERROR_STATE, 4)),
    zeroLevels(ERROR_STATE, 4),
    increment(half),
    set(vector, i32.const(0)),
  );
  fb.emit(
    initElement(L, maxCode),
    set(rowBytes, i32.shl(get(cols), i32.const(2))),
    set(mask, i32.sub(i32.shl(i32.const(1), get(power)), i32.const(1))),
    set(columnMask, i32.sub(i32.shl(i32.const(1), get(columnPower)), i32.const(1))),
    zeroLevels(ERROR_STATE, 4),
    overColumns(...[0, 1, 2, 3].map((level) => v128.store(columnAt(level), ZERO))),
    set(ptr, get(pW)),
    block(loop(
      set(offset, i32.const(0)),
      block(loop(
        set(L.w, v128.load(i32.add(get(ptr), get(offset)))),
        set(L.sv, v128.load(i32.add(get(pS), get(offset)))),
        set(L.zv, v128.load(i32.add(get(pZ), get(offset)))),
        element(L),
        accumulateAt(columnAt(0), get(L.c)),
        accumulateAt(errorSlot, get(L.a)),
        increment(vector),
        ifThen(i32.eqz(i32.and(get(vector), i32.const(SLOTS - 1))),
          set(run, i32.shrU(get(vector), i32.const(3))),
          cascadePush(run, mask, power, (level) => pushLevel(ERROR_STATE, level)),
          ifThen(i32.eq(get(vector), get(vectorsPerHalf)), finishHalf)),
        increment(offset, i32.const(16)),
        brIf(0, i32.ltU(get(offset), get(rowBytes))),
      )),
      increment(ptr, get(rowBytes)),
      increment(row),
      cascadePush(row, columnMask, columnPower, pushColumns),
      brIf(0, i32.ltU(get(row), get(rows))),
    )),
    overColumns(v128.store(columnAt(0), f32x4.add(f32x4.add(f32x4.add(
      v128.load(columnAt(0)), v128.load(columnAt(1))), v128.load(columnAt(2))), v128.load(columnAt(3))))),
  );
  return fb;
}

/**
 * torch's `row_sum` of the columns [begin, end) of `[rows, cols]`: 4 interleaved cascades over rows
 * 4i + k (lane k), the leftover rows into lane 0, then lanes 0..3 in order. Params (pW, pS, pZ,
 * pSums, rows, cols, begin, end, levelPower, maxCode f32).
 */
export function ilpColumns(): FunctionBuilder {
  const fb = new FunctionBuilder('ilpColumns', [I, I, I, I, I, I, I, I, I, ValType.F32], []);
  const [pW, pS, pZ, pSums, rows, cols, begin, end, power, maxCode] = params(fb, 10) as [Local, Local, Local, Local, Local, Local, Local, Local, Local, Local];
  const L = elementLocals(fb);
  const column = fb.local(I);
  const rowBytes = fb.local(I);
  const base = fb.local(I);
  const ilpRow = fb.local(I);
  const ilpRows = fb.local(I);
  const mask = fb.local(I);
  const leftover = fb.local(I);
  const sum = fb.local(ValType.F32);
  const levels = [fb.local(V), fb.local(V), fb.local(V), fb.local(V)];

  /** lanes k < count of L.w hold rows 4i + k of the column at `base`; the others 0 */
  const gatherRows = (partial: boolean): Code => {
    const parts: Code[] = [set(L.w, f32x4.splat(f32.load(get(base))))];
    for (let k = 1; k < 4; k++) {
      const lane = set(L.w, f32x4.replaceLane(get(L.w), k, f32.load(i32.add(get(base), i32.mul(get(rowBytes), i32.const(k))))));
      parts.push(partial ? ifElse(i32.ltU(i32.const(k), get(leftover)), [lane], [set(L.w, f32x4.replaceLane(get(L.w), k, f32.const(0)))]) : lane);
    }
    return seq(...parts);
  };
  const push = (level: number): Code => seq(set(levels[level]!, f32x4.add(get(levels[level]!), get(levels[level - 1]!))), set(levels[level - 1]!, ZERO));
  const addLane = (v: Code, lane: number): Code => set(sum, f32.add(get(sum), f32x4.extractLane(v, lane)));
  const columnParam = (p: Local): Code => f32x4.splat(f32.load(i32.add(get(p), i32.shl(get(column), i32.const(2)))));
  fb.emit(
    initElement(L, maxCode),
    set(rowBytes, i32.shl(get(cols), i32.const(2))),
    set(ilpRows, i32.shrU(get(rows), i32.const(2))),
    set(leftover, i32.and(get(rows), i32.const(3))),
    set(mask, i32.sub(i32.shl(i32.const(1), get(power)), i32.const(1))),
    set(column, get(begin)),
    block(loop(
      brIf(1, i32.geU(get(column), get(end))),
      set(L.sv, columnParam(pS)),
      set(L.zv, columnParam(pZ)),
      ...levels.map((l) => set(l, ZERO)),
      set(base, i32.add(get(pW), i32.shl(get(column), i32.const(2)))),
      set(ilpRow, i32.const(0)),
      block(loop(
        brIf(1, i32.geU(get(ilpRow), get(ilpRows))),
        gatherRows(false),
        element(L),
        set(levels[0]!, f32x4.add(get(levels[0]!), get(L.c))),
        increment(ilpRow),
        cascadePush(ilpRow, mask, power, push),
        increment(base, i32.shl(get(rowBytes), i32.const(2))),
        br(0),
      )),
      set(levels[0]!, f32x4.add(f32x4.add(f32x4.add(get(levels[0]!), get(levels[1]!)), get(levels[2]!)), get(levels[3]!))),
      set(sum, f32x4.extractLane(get(levels[0]!), 0)),
      ifThen(i32.ne(get(leftover), i32.const(0)),
        gatherRows(true),
        element(L),
        ...[0, 1, 2].map((k) => ifThen(i32.ltU(i32.const(k), get(leftover)), addLane(get(L.c), k)))),
      addLane(get(levels[0]!), 1),
      addLane(get(levels[0]!), 2),
      addLane(get(levels[0]!), 3),
      f32.store(i32.add(get(pSums), i32.shl(get(column), i32.const(2))), get(sum)),
      increment(column),
      br(0),
    )),
  );
  return fb;
}
