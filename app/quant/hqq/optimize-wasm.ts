import type { HqqGrid } from './grid.js';
import type { OptimizerEngine } from './optimizer.js';
import { DYNAMIC_BASE, ERROR_OUT, POWER_VECTORS_AT, threadState } from './kernel-layout.js';
import { MAX_KERNEL_BYTES, alignBytes, hqqKernels } from './kernels.js';
import type { HqqKernelCall } from './kernels.js';
import { packCodes, packedByteLength } from './bitpack.js';
import { cascadeLevelPower, columnSumKinds, combineChunkSums, fullSumChunks } from './torch-sum.js';
import { checkFinite } from './validate.js';

/**
 * The WebAssembly SIMD engine: the same bits as optimize-js.ts, 30–50x faster. It covers the
 * layouts where torch's 32-element summation rows line up with 4-lane vectors:
 *
 * - axis 1: group size a multiple of 32 below 512 (a group is whole torch rows, no cascade push);
 * - axis 0: N/g columns a multiple of 4;
 * - both: N a multiple of 64, so each thread chunk of the error mean is whole 32-element rows.
 *
 * Anything else (and runtimes without WebAssembly SIMD or synchronous compilation) uses the JS engine.
 *
 * With a helper thread (kernels.ts `setHqqThreadPool`), each step runs as two kernel calls, one per
 * torch thread chunk of the error mean: axis 1 when the chunk boundary falls between groups, axis 0
 * when it falls between blocks of torch's column cascade (app/wasm/kernels/hqq.ts `stepStrided`). Each call
 * sums exactly what one call over the whole tensor sums, in the same order, so the bits are the same.
 *
 * The axis-0 step kernel comes in two orders of the vectors of a run (`RunOrder`), again the same
 * bits; the engine picks one per step from the share of vectors the previous step found needing the power.
 *
 * Memory layout from DYNAMIC_BASE: W (N f32) | s | z | block sums (axis 0; also min/max) | column
 * sums | codes (N u8) | packed.
 */
const fround = Math.fround;
/** Rows of torch's per-thread accumulators: 4 AVX2 vectors × 8 lanes. */
const TORCH_ROW = 32;

/** Whether the WebAssembly engine handles this layout (see the file comment). */
export function wasmEngineSupports(grid: HqqGrid): boolean {
  if (grid.count % 64 !== 0 || grid.count * 6 + DYNAMIC_BASE > MAX_KERNEL_BYTES) return false;
  if (grid.axis === 1) return grid.groupSize % TORCH_ROW === 0 && grid.groupSize < 16 * TORCH_ROW;
  return grid.cols % 4 === 0 && grid.cols > 1;
}

/** Whether a step of this layout can be split between two threads (see the file comment). */
export function wasmStepSplits(grid: HqqGrid): boolean {
  const chunks = fullSumChunks(grid.count);
  if (chunks.length !== 2 || chunks[0]![1] * 2 !== grid.count) return false;
  const half = grid.count / 2;
  if (grid.axis === 1) return half % grid.groupSize === 0;
  const blockRows = 1 << cascadeLevelPower(grid.rows);
  return grid.rows % 2 === 0 && (grid.rows / 2) % blockRows === 0;
}

/**
 * How the axis-0 step kernel orders the 8 vectors of a 32-element run (app/wasm/kernels/hqq.ts `row8` and `row8Sequential`):
 * the same bits either way, a different speed. `adaptive` runs the first step interleaved, then each
 * step in the order that suits the share of vectors the previous step found needing the power. The
 * axis-1 kernel is always interleaved (never slower there), whatever the choice.
 */
export type RunOrder = 'interleaved' | 'sequential';
export type RunOrderChoice = RunOrder | 'adaptive';

/**
 * The share of vectors needing the power above which interleaving pays. Measured with bench/hqq.ts's
 * tensor at 4 bits axis 0, scaled: sequential is faster at ×1 (share 0.05, 116 vs 150 ms on one
 * thread) and ×1.1 (0.14), even at ×1.2 (0.27), interleaved far faster at ×1.5 (0.63, 226 vs 373
 * ms, where sequential mispredicts its per-vector branch) and at 2 bits (share above 0.9). The axis-1
 * kernel measured 106 vs 113 ms (×1), 142 vs 160 (×1.1), 178 vs 228 (×1.2): it has no sequential order.
 */
const INTERLEAVE_ABOVE = 0.25;

export interface WasmStepRecord {
  readonly order: RunOrder;
  /** the share of vectors with a lane that needed the power in this step */
  readonly powerShare: number;
}

export interface WasmOptimizerEngine extends OptimizerEngine {
  /** one record per step run so far */
  readonly steps: readonly WasmStepRecord[];
}

export function createWasmEngine(values: Float32Array, grid: HqqGrid, maxCode: number,
  orderChoice: RunOrderChoice = 'adaptive'): WasmOptimizerEngine | undefined {
  if (!wasmEngineSupports(grid)) return undefined;
  const k = hqqKernels();
  if (k === null) return undefined;

  const { count: n, groups, rows, cols, groupSize } = grid;
  const blockPower = cascadeLevelPower(rows);
  const blockRows = 1 << blockPower;
  const blockCount = Math.ceil(rows / blockRows);
  const pW = DYNAMIC_BASE;
  const pS = alignBytes(pW + n * 4);
  const pZ = alignBytes(pS + groups * 4);
  const pBlocks = alignBytes(pZ + groups * 4); // axis 0: block sums; min/max first
  const pSums = alignBytes(pBlocks + Math.max(2, grid.axis === 0 ? blockCount : 0) * groups * 4);
  const pCodes = alignBytes(pSums + groups * 4);
  const pPacked = alignBytes(pCodes + n);
  const buffer = k.reserve(alignBytes(pPacked + n));
  new Float32Array(buffer, pW, n).set(values);
  const s = new Float32Array(buffer, pS, groups);
  const z = new Float32Array(buffer, pZ, groups);
  const errorOut = new Float32Array(buffer, ERROR_OUT, 2);
  const columnSums = new Float32Array(buffer, pSums, groups);
  let zero: Float32Array = new Float32Array(0);

  const chunks = fullSumChunks(n);
  const chunkLength = chunks[0]![1] - chunks[0]![0];
  const errorPower = cascadeLevelPower(chunkLength / TORCH_ROW);
  const total = fround(n);
  const readError = (): number => fround(combineChunkSums(chunks.map((_, i) => errorOut[i]!)) / total);
  const ilpRanges = grid.axis === 0 ? kindRanges(columnSumKinds(rows, cols)) : [];
  const divisor = fround(groupSize);
  const threads = k.helpers > 0 && n >= k.minParallelElements && wasmStepSplits(grid) ? 2 : 1;

  /** The step kernel call for thread t of `threads`. */
  const stepCall = (t: number, order: RunOrder): HqqKernelCall => {
    const share = n / threads; // elements per thread: whole chunks
    if (grid.axis === 1) {
      const firstGroup = (t * share) / groupSize;
      return {
        name: 'stepContiguous',
        args: [pW + t * share * 4, pS + firstGroup * 4, pZ + firstGroup * 4, share / TORCH_ROW, groupSize / TORCH_ROW,
          chunkLength / TORCH_ROW, errorPower, maxCode, groupSize, threadState(t), ERROR_OUT + 4 * t],
      };
    }
    const rowShare = rows / threads;
    return {
      name: order === 'interleaved' ? 'stepStridedInterleaved' : 'stepStrided',
      args: [pW + t * share * 4, pS, pZ, pBlocks + ((t * rowShare) / blockRows) * cols * 4, rowShare, cols, chunkLength / 4,
        errorPower, blockPower, maxCode, threadState(t), ERROR_OUT + 4 * t],
    };
  };
  const calls = (order: RunOrder): { local: HqqKernelCall; helpers: HqqKernelCall[] } => ({
    local: stepCall(0, order),
    helpers: threads === 2 ? [stepCall(1, order)] : [],
  });
  const callsByOrder = { interleaved: calls('interleaved'), sequential: calls('sequential') };
  const powerVectors = Array.from({ length: threads }, (_, t) => new Int32Array(buffer, threadState(t) + POWER_VECTORS_AT, 1));
  const steps: WasmStepRecord[] = [];
  const adaptive = orderChoice === 'adaptive' && grid.axis === 0;
  let order: RunOrder = grid.axis === 1 || orderChoice === 'adaptive' ? 'interleaved' : orderChoice;

  return {
    name: 'wasm',
    steps,
    groupRanges() {
      const pMin = pBlocks;
      const pMax = pBlocks + groups * 4;
      if (grid.axis === 1) k.rangeContiguous(pW, pMin, pMax, groups, groupSize);
      else k.rangeStrided(pW, pMin, pMax, rows, cols);
      const min = new Float32Array(buffer, pMin, groups).slice();
      const max = new Float32Array(buffer, pMax, groups).slice();
      // IEEE min/max propagate NaN and keep ±inf: a non-finite range means a non-finite input, and
      // checkFinite then throws naming the first one.
      for (let g = 0; g < groups; g++) {
        if (!Number.isFinite(min[g]!) || !Number.isFinite(max[g]!)) checkFinite(values);
      }
      return { min, max };
    },
    start(inverseScale: Float32Array, z0: Float32Array): void {
      s.set(inverseScale);
      z.set(z0);
      zero = z0;
    },
    step(): number {
      const { local, helpers } = callsByOrder[order];
      k.parallel(helpers, () => k[local.name](...local.args));
      const powerShare = powerVectors.reduce((sum, count) => sum + count[0]!, 0) / (n / 4);
      steps.push({ order, powerShare });
      if (adaptive) order = powerShare > INTERLEAVE_ABOVE ? 'interleaved' : 'sequential';
      if (grid.axis === 0) {
        k.combineColumns(pBlocks, pSums, cols, Math.floor(rows / blockRows), rows % blockRows === 0 ? 0 : 1, blockPower);
        for (const [begin, end] of ilpRanges) {
          k.ilpColumns(pW, pS, pZ, pSums, rows, cols, begin, end, cascadeLevelPower(Math.floor(rows / 4)), maxCode);
        }
        for (let c = 0; c < cols; c++) z[c] = columnSums[c]! / divisor;
      }
      zero.set(z);
      return readError();
    },
    packedCodes(nbits: number): Uint8Array {
      if (grid.axis === 1) k.codesContiguous(pW, pS, pZ, pCodes, groups, groupSize, maxCode);
      else k.codesStrided(pW, pS, pZ, pCodes, rows, cols, maxCode);
      const planes = 8 / nbits;
      const planeBytes = n / planes;
      if (nbits === 3 || planeBytes % 16 !== 0) return packCodes(new Uint8Array(buffer, pCodes, n).slice(), rows, cols, nbits);
      k.packPlanes(pCodes, pPacked, planeBytes, planes, nbits);
      return new Uint8Array(buffer, pPacked, packedByteLength(rows, cols, nbits)).slice();
    },
    dispose(): void {},
  };
}

/** Ranges [begin, end) of the columns torch sums with `row_sum` rather than a plain cascade. */
function kindRanges(kinds: readonly string[]): [number, number][] {
  const ranges: [number, number][] = [];
  for (let c = 0; c < kinds.length; c++) {
    if (kinds[c] !== 'ilp') continue;
    const last = ranges[ranges.length - 1];
    if (last !== undefined && last[1] === c) last[1] = c + 1;
    else ranges.push([c, c + 1]);
  }
  return ranges;
}
