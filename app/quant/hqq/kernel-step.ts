import { FunctionBuilder, ValType, block, br, brIf, f32, f32x4, get, i32, ifElse, ifThen, loop, seq, set, v128 } from '../../wasm/wasm-encoder.js';
import type { Code, Local } from '../../wasm/wasm-encoder.js';
import type { ElementLocals, SlotLocals } from './kernel-element.js';
import { ERROR_LEVELS_AT, GROUP_SLOTS_AT, POWER_VECTORS_AT } from './kernel-layout.js';
import { ZERO, elements, elementLocals, initElement, sharedParams, slotLocals } from './kernel-element.js';
import { SLOTS, accumulate, accumulateAt, cascadePush, combineLevels, pushLevel, slotOffset, zeroLevels } from './kernel-sums.js';

/**
 * The optimizer-step kernels (one `optimize_weights_proximal_legacy_step`, spec §3.2 step 3): the
 * element work of kernel-element.ts plus torch's sums (kernel-sums.ts) of c per group and of a over
 * the whole tensor, per torch thread chunk ("half": torch-sum.ts `fullSumChunks`).
 *
 * Every step kernel works on a range of the tensor with its own scratch (`pState`) and writes its
 * chunk sums of a at `pErrorOut`, so one call can cover the whole tensor, or two threads can each
 * take one torch chunk (optimize-wasm.ts): the same operations either way, so the same bits.
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
 * The 8 slots of one torch row: `load` sets each slot's W, `elements` computes c and a, `store` uses
 * them. Interleaved, every slot goes through each stage before the next stage starts: the CPU overlaps
 * their long dependency chains (division, table fetches, float64 series), which pays when most
 * vectors need the power, while the 16 or more vectors kept alive spill to the stack, which costs
 * when few do (axis 0, where each slot has its own s and z). Both orders compute the same bits;
 * optimize-wasm.ts picks one by `L.powerVectors`.
 */
function slotStages(L: ElementLocals, interleaved: boolean, load: (slot: SlotLocals, v: number) => Code,
  store: (slot: SlotLocals, v: number) => Code): Code[] {
  if (interleaved) return [...L.slots.map(load), elements(L), ...L.slots.map(store)];
  return L.slots.map((slot, v) => seq(load(slot, v), elements(L, [slot]), store(slot, v)));
}

/** Stores `L.powerVectors` in the thread's scratch, for optimize-wasm.ts. */
function storePowerVectors(L: ElementLocals, state: Local): Code {
  return i32.store(get(state), get(L.powerVectors), POWER_VECTORS_AT);
}

/**
 * Axis 1 (contiguous groups of g = 32·m < 512 elements): params (pW, pS, pZ, runs, runsPerGroup,
 * runsPerHalf, errorLevelPower, maxCode f32, groupSize f32, pState, pErrorOut). A "run" is one torch
 * row of 32 elements, for the group mean and for the error mean alike; the range starts at a group
 * and a chunk boundary. Writes every group's new z (f32 at pZ) and every chunk's error sum (f32 at
 * pErrorOut, in order).
 */
export function stepContiguous(): FunctionBuilder {
  const fb = new FunctionBuilder('stepContiguous', [I, I, I, I, I, I, I, ValType.F32, ValType.F32, I, I]);
  const [pW, pS, pZ, runs, runsPerGroup, runsPerHalf, power, maxCode, groupSize, state, pErrorOut] =
    params(fb, 11) as [Local, Local, Local, Local, Local, Local, Local, Local, Local, Local, Local];
  const sv = fb.local(V);
  const zv = fb.local(V);
  const L = elementLocals(fb, slotLocals(fb, SLOTS, sharedParams(sv, zv)));
  const ptr = fb.local(I);
  const run = fb.local(I);
  const runInGroup = fb.local(I);
  const runInHalf = fb.local(I);
  const group = fb.local(I);
  const half = fb.local(I);
  const mask = fb.local(I);

  const groupParam = (base: Local): Code => f32x4.splat(f32.load(i32.add(get(base), i32.shl(get(group), i32.const(2)))));
  const loadGroup = seq(set(sv, groupParam(pS)), set(zv, groupParam(pZ)));
  // interleaved always: here it measured as fast as one vector at a time even when no vector needs the
  // power (the slots share s and z, so fewer vectors stay alive), and far faster when many do
  const body = slotStages(L, true,
    (slot, v) => set(slot.w, v128.load(get(ptr), v * 16)),
    (slot, v) => seq(
      accumulate(state, slotOffset(GROUP_SLOTS_AT, 0, v), get(slot.c)),
      accumulate(state, slotOffset(ERROR_LEVELS_AT, 0, v), get(slot.a)),
    ));
  const finishGroup = seq(
    f32.store(i32.add(get(pZ), i32.shl(get(group), i32.const(2))), f32.div(combineLevels(state, GROUP_SLOTS_AT, 1), get(groupSize))),
    zeroLevels(state, GROUP_SLOTS_AT, 1),
    increment(group),
    set(runInGroup, i32.const(0)),
    ifThen(i32.ltU(get(run), get(runs)), loadGroup),
  );
  const finishHalf = seq(
    f32.store(i32.add(get(pErrorOut), i32.shl(get(half), i32.const(2))), combineLevels(state, ERROR_LEVELS_AT, 4)),
    zeroLevels(state, ERROR_LEVELS_AT, 4),
    increment(half),
    set(runInHalf, i32.const(0)),
  );
  fb.emit(
    initElement(L, maxCode),
    set(mask, i32.sub(i32.shl(i32.const(1), get(power)), i32.const(1))),
    zeroLevels(state, ERROR_LEVELS_AT, 4),
    zeroLevels(state, GROUP_SLOTS_AT, 1),
    set(ptr, get(pW)),
    loadGroup,
    block(loop(
      ...body,
      increment(ptr, i32.const(SLOTS * 16)),
      increment(run),
      increment(runInGroup),
      increment(runInHalf),
      cascadePush(runInHalf, mask, power, (level) => pushLevel(state, ERROR_LEVELS_AT, level)),
      ifThen(i32.eq(get(runInGroup), get(runsPerGroup)), finishGroup),
      ifThen(i32.eq(get(runInHalf), get(runsPerHalf)), finishHalf),
      brIf(0, i32.ltU(get(run), get(runs))),
    )),
    storePowerVectors(L, state),
  );
  return fb;
}

/**
 * Axis 0 (groups are the columns of `[rows, cols]`; cols a multiple of 4): params (pW, pS, pZ,
 * pBlocks, rows, cols, vectorsPerHalf, errorLevelPower, blockPower, maxCode f32, pState, pErrorOut).
 * Sweeps `rows` rows from pW in flat order, starting at a torch chunk boundary and at a multiple of
 * 2^blockPower rows. `multi_row_sum` sums each column in blocks of 2^blockPower rows and then the
 * block sums; this kernel writes each block's column sums as one row of `cols` floats from pBlocks
 * (the last block may be partial), and `combineColumns` adds the blocks up in torch's order.
 */
export function stepStrided(interleaved: boolean): FunctionBuilder {
  const fb = new FunctionBuilder(interleaved ? 'stepStridedInterleaved' : 'stepStrided', [I, I, I, I, I, I, I, I, I, ValType.F32, I, I]);
  const [pW, pS, pZ, pBlocks, rows, cols, vectorsPerHalf, power, blockPower, maxCode, state, pErrorOut] =
    params(fb, 12) as [Local, Local, Local, Local, Local, Local, Local, Local, Local, Local, Local, Local];
  const offset = fb.local(I);
  // each slot reads its s and z (one vector per column) from memory where it uses them
  const fromMemory = (base: Local, v: number): Code => v128.load(i32.add(get(base), get(offset)), v * 16);
  const L = elementLocals(fb, slotLocals(fb, SLOTS, (v) => ({ s: fromMemory(pS, v), z: fromMemory(pZ, v) })));
  const [S] = slotLocals(fb, 1, (v) => ({ s: fromMemory(pS, v), z: fromMemory(pZ, v) })) as [SlotLocals];
  const ptr = fb.local(I);
  const rowBytes = fb.local(I);
  const row = fb.local(I);
  const blockRow = fb.local(I);
  const end = fb.local(I);
  const vector = fb.local(I);
  const run = fb.local(I);
  const half = fb.local(I);
  const mask = fb.local(I);

  const errorSlot = i32.add(get(state), i32.shl(i32.and(get(vector), i32.const(SLOTS - 1)), i32.const(4)));
  const finishHalf = seq(
    f32.store(i32.add(get(pErrorOut), i32.shl(get(half), i32.const(2))), combineLevels(state, ERROR_LEVELS_AT, 4)),
    zeroLevels(state, ERROR_LEVELS_AT, 4),
    increment(half),
    set(vector, i32.const(0)),
  );
  fb.emit(
    initElement(L, maxCode),
    set(rowBytes, i32.shl(get(cols), i32.const(2))),
    set(mask, i32.sub(i32.shl(i32.const(1), get(power)), i32.const(1))),
    zeroLevels(state, ERROR_LEVELS_AT, 4),
    // zero the block rows this call writes: ⌈rows / 2^blockPower⌉ of them
    set(ptr, get(pBlocks)),
    set(end, i32.add(get(pBlocks), i32.mul(get(rowBytes),
      i32.shrU(i32.sub(i32.add(get(rows), i32.shl(i32.const(1), get(blockPower))), i32.const(1)), get(blockPower))))),
    block(loop(brIf(1, i32.geU(get(ptr), get(end))), v128.store(get(ptr), ZERO), increment(ptr, i32.const(16)), br(0))),
    set(ptr, get(pW)),
    block(loop(
      set(blockRow, i32.add(get(pBlocks), i32.mul(i32.shrU(get(row), get(blockPower)), get(rowBytes)))),
      set(offset, i32.const(0)),
      ifElse(i32.eqz(i32.and(get(rowBytes), i32.const(SLOTS * 16 - 1))),
        // rows of whole torch rows (cols a multiple of 32): 8 vectors at a time, error slots fixed
        [block(loop(
          ...slotStages(L, interleaved,
            (slot, v) => set(slot.w, v128.load(i32.add(get(ptr), get(offset)), v * 16)),
            (slot, v) => seq(
              accumulateAt(i32.add(get(blockRow), get(offset)), get(slot.c), v * 16),
              accumulate(state, slotOffset(ERROR_LEVELS_AT, 0, v), get(slot.a)),
            )),
          increment(vector, i32.const(SLOTS)),
          set(run, i32.shrU(get(vector), i32.const(3))),
          cascadePush(run, mask, power, (level) => pushLevel(state, ERROR_LEVELS_AT, level)),
          ifThen(i32.eq(get(vector), get(vectorsPerHalf)), finishHalf),
          increment(offset, i32.const(SLOTS * 16)),
          brIf(0, i32.ltU(get(offset), get(rowBytes))),
        ))],
        [block(loop(
          set(S.w, v128.load(i32.add(get(ptr), get(offset)))),
          elements(L, [S]),
          accumulateAt(i32.add(get(blockRow), get(offset)), get(S.c)),
          accumulateAt(errorSlot, get(S.a)),
          increment(vector),
          ifThen(i32.eqz(i32.and(get(vector), i32.const(SLOTS - 1))),
            set(run, i32.shrU(get(vector), i32.const(3))),
            cascadePush(run, mask, power, (level) => pushLevel(state, ERROR_LEVELS_AT, level)),
            ifThen(i32.eq(get(vector), get(vectorsPerHalf)), finishHalf)),
          increment(offset, i32.const(16)),
          brIf(0, i32.ltU(get(offset), get(rowBytes))),
        ))]),
      increment(ptr, get(rowBytes)),
      increment(row),
      brIf(0, i32.ltU(get(row), get(rows))),
    )),
    storePowerVectors(L, state),
  );
  return fb;
}

/**
 * `multi_row_sum`'s cascade over the block sums of `stepStrided`, four columns at a time: params
 * (pBlocks, pSums, cols, fullBlocks, partial, power). Block k is added into level 1; every 2^power
 * blocks level 1 moves into level 2, every 2^(2·power) blocks level 2 into level 3; the total is
 * ((partial block + L1) + L2) + L3 (torch-sum.ts `cascadeSum`). Writes the column sums at pSums.
 */
export function combineColumns(): FunctionBuilder {
  const fb = new FunctionBuilder('combineColumns', [I, I, I, I, I, I]);
  const [pBlocks, pSums, cols, fullBlocks, partial, power] = params(fb, 6) as [Local, Local, Local, Local, Local, Local];
  const rowBytes = fb.local(I);
  const offset = fb.local(I);
  const ptr = fb.local(I);
  const k = fb.local(I);
  const mask = fb.local(I);
  const levels = [fb.local(V), fb.local(V), fb.local(V), fb.local(V)] as const;
  const [l0, l1, l2, l3] = levels;
  fb.emit(
    set(rowBytes, i32.shl(get(cols), i32.const(2))),
    set(mask, i32.sub(i32.shl(i32.const(1), get(power)), i32.const(1))),
    block(loop(
      brIf(1, i32.geU(get(offset), get(rowBytes))),
      set(l1, ZERO), set(l2, ZERO), set(l3, ZERO),
      set(ptr, i32.add(get(pBlocks), get(offset))),
      set(k, i32.const(0)),
      block(loop(
        brIf(1, i32.geU(get(k), get(fullBlocks))),
        set(l1, f32x4.add(get(l1), v128.load(get(ptr)))),
        increment(k),
        ifThen(i32.eqz(i32.and(get(k), get(mask))),
          set(l2, f32x4.add(get(l2), get(l1))), set(l1, ZERO),
          ifThen(i32.eqz(i32.and(get(k), i32.shl(get(mask), get(power)))),
            set(l3, f32x4.add(get(l3), get(l2))), set(l2, ZERO))),
        increment(ptr, get(rowBytes)),
        br(0),
      )),
      set(l0, ZERO),
      ifThen(get(partial), set(l0, v128.load(get(ptr)))),
      v128.store(i32.add(get(pSums), get(offset)), f32x4.add(f32x4.add(f32x4.add(get(l0), get(l1)), get(l2)), get(l3))),
      increment(offset, i32.const(16)),
      br(0),
    )),
  );
  return fb;
}

/**
 * torch's `row_sum` of the columns [begin, end) of `[rows, cols]`: 4 interleaved cascades over rows
 * 4i + k (lane k), the leftover rows into lane 0, then lanes 0..3 in order. Params (pW, pS, pZ,
 * pSums, rows, cols, begin, end, levelPower, maxCode f32).
 */
export function ilpColumns(): FunctionBuilder {
  const fb = new FunctionBuilder('ilpColumns', [I, I, I, I, I, I, I, I, I, ValType.F32]);
  const [pW, pS, pZ, pSums, rows, cols, begin, end, power, maxCode] = params(fb, 10) as [Local, Local, Local, Local, Local, Local, Local, Local, Local, Local];
  const sv = fb.local(V);
  const zv = fb.local(V);
  const L = elementLocals(fb, slotLocals(fb, 1, sharedParams(sv, zv)));
  const [S] = L.slots as [SlotLocals];
  const column = fb.local(I);
  const rowBytes = fb.local(I);
  const base = fb.local(I);
  const ilpRow = fb.local(I);
  const ilpRows = fb.local(I);
  const mask = fb.local(I);
  const leftover = fb.local(I);
  const sum = fb.local(ValType.F32);
  const levels = [fb.local(V), fb.local(V), fb.local(V), fb.local(V)];

  /** lanes k < count of S.w hold rows 4i + k of the column at `base`; the others 0 */
  const gatherRows = (partial: boolean): Code => {
    const parts: Code[] = [set(S.w, f32x4.splat(f32.load(get(base))))];
    for (let k = 1; k < 4; k++) {
      const lane = set(S.w, f32x4.replaceLane(get(S.w), k, f32.load(i32.add(get(base), i32.mul(get(rowBytes), i32.const(k))))));
      parts.push(partial ? ifElse(i32.ltU(i32.const(k), get(leftover)), [lane], [set(S.w, f32x4.replaceLane(get(S.w), k, f32.const(0)))]) : lane);
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
      set(sv, columnParam(pS)),
      set(zv, columnParam(pZ)),
      ...levels.map((l) => set(l, ZERO)),
      set(base, i32.add(get(pW), i32.shl(get(column), i32.const(2)))),
      set(ilpRow, i32.const(0)),
      block(loop(
        brIf(1, i32.geU(get(ilpRow), get(ilpRows))),
        gatherRows(false),
        elements(L),
        set(levels[0]!, f32x4.add(get(levels[0]!), get(S.c))),
        increment(ilpRow),
        cascadePush(ilpRow, mask, power, push),
        increment(base, i32.shl(get(rowBytes), i32.const(2))),
        br(0),
      )),
      set(levels[0]!, f32x4.add(f32x4.add(f32x4.add(get(levels[0]!), get(levels[1]!)), get(levels[2]!)), get(levels[3]!))),
      set(sum, f32x4.extractLane(get(levels[0]!), 0)),
      ifThen(i32.ne(get(leftover), i32.const(0)),
        gatherRows(true),
        elements(L),
        ...[0, 1, 2].map((k) => ifThen(i32.ltU(i32.const(k), get(leftover)), addLane(get(S.c), k)))),
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
