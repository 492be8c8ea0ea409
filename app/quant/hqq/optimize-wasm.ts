import type { HqqGrid } from './grid.js';
import type { OptimizerEngine } from './optimizer.js';
import { DYNAMIC_BASE, ERROR_OUT } from './kernel-layout.js';
import { MAX_KERNEL_BYTES, alignBytes, hqqKernels } from './kernels.js';
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
 * Memory layout from DYNAMIC_BASE: W (N f32) | s | z | axis 0: 4 cascade levels × columns | codes (N u8) | packed.
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

export function createWasmEngine(values: Float32Array, grid: HqqGrid, maxCode: number): OptimizerEngine | undefined {
  if (!wasmEngineSupports(grid)) return undefined;
  const k = hqqKernels();
  if (k === null) return undefined;

  const { count: n, groups, rows, cols } = grid;
  const pW = DYNAMIC_BASE;
  const pS = alignBytes(pW + n * 4);
  const pZ = alignBytes(pS + groups * 4);
  const pColumns = alignBytes(pZ + groups * 4); // axis 0: 4 cascade levels × columns; also min/max
  const pCodes = alignBytes(pColumns + 4 * groups * 4);
  const pPacked = alignBytes(pCodes + n);
  const buffer = k.reserve(alignBytes(pPacked + n));
  new Float32Array(buffer, pW, n).set(values);
  const s = new Float32Array(buffer, pS, groups);
  const z = new Float32Array(buffer, pZ, groups);
  const errorOut = new Float32Array(buffer, ERROR_OUT, 2);
  let zero: Float32Array = new Float32Array(0);

  const chunks = fullSumChunks(n);
  const chunkLength = chunks[0]![1] - chunks[0]![0];
  const errorPower = cascadeLevelPower(chunkLength / TORCH_ROW);
  const total = fround(n);
  const readError = (): number => fround(combineChunkSums(chunks.map((_, i) => errorOut[i]!)) / total);
  const ilpRanges = grid.axis === 0 ? kindRanges(columnSumKinds(rows, cols)) : [];
  const columnSums = new Float32Array(buffer, pColumns, groups);
  const divisor = fround(grid.groupSize);

  return {
    name: 'wasm',
    groupRanges() {
      const pMin = pColumns;
      const pMax = pColumns + groups * 4;
      if (grid.axis === 1) k.rangeContiguous(pW, pMin, pMax, groups, grid.groupSize);
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
      if (grid.axis === 1) {
        k.stepContiguous(pW, pS, pZ, n / TORCH_ROW, grid.groupSize / TORCH_ROW, chunkLength / TORCH_ROW, errorPower, maxCode, grid.groupSize);
      } else {
        k.stepStrided(pW, pS, pZ, pColumns, rows, cols, chunkLength / 4, errorPower, cascadeLevelPower(rows), maxCode);
        for (const [begin, end] of ilpRanges) {
          k.ilpColumns(pW, pS, pZ, pColumns, rows, cols, begin, end, cascadeLevelPower(Math.floor(rows / 4)), maxCode);
        }
        for (let c = 0; c < cols; c++) z[c] = columnSums[c]! / divisor;
      }
      zero.set(z);
      return readError();
    },
    packedCodes(nbits: number): Uint8Array {
      if (grid.axis === 1) k.codesContiguous(pW, pS, pZ, pCodes, groups, grid.groupSize, maxCode);
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
