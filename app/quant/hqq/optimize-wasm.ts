import type { HqqGrid } from './grid.js';
import type { OptimizerEngine } from './optimizer.js';
import { DYNAMIC_BASE, ERROR_OUT, PAGE_BYTES, hqqKernelModuleBytes, writePowTables } from './kernel-module.js';
import { cascadeLevelPower, columnSumKinds, combineChunkSums, fullSumChunks } from './torch-sum.js';

/**
 * The WebAssembly SIMD engine: same bits as optimize-js.ts, about 10x faster. It covers the layouts
 * where torch's summation rows line up with 4-lane vectors:
 *
 * - axis 1: group size a multiple of 32 below 512 (a group is whole 32-element torch rows);
 * - axis 0: N/g columns a multiple of 4;
 * - both: N a multiple of 64, so each thread chunk of the error mean is whole 32-element rows.
 *
 * Anything else (and runtimes without WebAssembly SIMD or synchronous compilation) uses the JS engine.
 * The compiled module and its memory are kept for the life of the process; the memory grows to the
 * largest tensor quantized (about 5 bytes per element) and `releaseHqqKernels()` drops it.
 */
const fround = Math.fround;
/** Rows of torch's per-thread accumulators: 4 AVX2 vectors × 8 lanes. */
const TORCH_ROW = 32;
const MAX_MEMORY_BYTES = 2 ** 31;

interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { readonly exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => WasmMemory;
}

type KernelFunction = (...args: number[]) => void;

interface Kernels {
  readonly memory: WasmMemory;
  readonly stepContiguous: KernelFunction;
  readonly stepStrided: KernelFunction;
  readonly ilpColumns: KernelFunction;
  readonly codesContiguous: KernelFunction;
  readonly codesStrided: KernelFunction;
}

let kernels: Kernels | null | undefined;

function loadKernels(): Kernels | null {
  if (kernels !== undefined) return kernels;
  kernels = null;
  const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (api === undefined) return kernels;
  try {
    const memory = new api.Memory({ initial: Math.ceil(DYNAMIC_BASE / PAGE_BYTES) });
    const instance = new api.Instance(new api.Module(hqqKernelModuleBytes()), { env: { memory } });
    const fn = (name: string): KernelFunction => instance.exports[name] as KernelFunction;
    writePowTables(memory.buffer);
    kernels = {
      memory,
      stepContiguous: fn('stepContiguous'),
      stepStrided: fn('stepStrided'),
      ilpColumns: fn('ilpColumns'),
      codesContiguous: fn('codesContiguous'),
      codesStrided: fn('codesStrided'),
    };
  } catch {
    // No SIMD, or a browser main thread that refuses to compile synchronously: the JS engine takes over.
    kernels = null;
  }
  return kernels;
}

/** Drops the compiled kernels and their memory; the next quantization compiles them again. */
export function releaseHqqKernels(): void {
  kernels = undefined;
}

/** Whether the WebAssembly engine handles this layout (see the file comment). */
export function wasmEngineSupports(grid: HqqGrid): boolean {
  if (grid.count % 64 !== 0 || grid.count * 5 + DYNAMIC_BASE > MAX_MEMORY_BYTES) return false;
  if (grid.axis === 1) return grid.groupSize % TORCH_ROW === 0 && grid.groupSize < 16 * TORCH_ROW;
  return grid.cols % 4 === 0 && grid.cols > 1;
}

function align(bytes: number): number {
  return Math.ceil(bytes / 64) * 64;
}

export function createWasmEngine(
  values: Float32Array,
  grid: HqqGrid,
  maxCode: number,
  inverseScale: Float32Array,
  zero: Float32Array,
): OptimizerEngine | undefined {
  if (!wasmEngineSupports(grid)) return undefined;
  const k = loadKernels();
  if (k === null) return undefined;

  const n = grid.count;
  const groups = grid.groups;
  const pW = DYNAMIC_BASE;
  const pS = align(pW + n * 4);
  const pZ = align(pS + groups * 4);
  const pColumns = align(pZ + groups * 4); // axis 0: 4 cascade levels × columns
  const pCodes = align(pColumns + (grid.axis === 0 ? 4 * groups * 4 : 0));
  const end = align(pCodes + n);
  if (k.memory.buffer.byteLength < end) k.memory.grow(Math.ceil((end - k.memory.buffer.byteLength) / PAGE_BYTES));
  const buffer = k.memory.buffer;
  new Float32Array(buffer, pW, n).set(values);
  new Float32Array(buffer, pS, groups).set(inverseScale);
  const z = new Float32Array(buffer, pZ, groups);
  z.set(zero);
  const errorOut = new Float32Array(buffer, ERROR_OUT, 2);

  const chunks = fullSumChunks(n);
  const chunkLength = chunks[0]![1] - chunks[0]![0];
  const errorPower = cascadeLevelPower(chunkLength / TORCH_ROW);
  const count = fround(n);
  const readError = (): number => fround(combineChunkSums(chunks.map((_, i) => errorOut[i]!)) / count);

  if (grid.axis === 1) {
    const g = grid.groupSize;
    return {
      name: 'wasm',
      step(): number {
        k.stepContiguous(pW, pS, pZ, n / TORCH_ROW, g / TORCH_ROW, chunkLength / TORCH_ROW, errorPower, maxCode, g);
        zero.set(z);
        return readError();
      },
      codes(out: Uint8Array): void {
        k.codesContiguous(pW, pS, pZ, pCodes, groups, g, maxCode);
        out.set(new Uint8Array(buffer, pCodes, n));
      },
      dispose(): void {},
    };
  }

  const { rows, cols } = grid;
  const ilpRanges = kindRanges(columnSumKinds(rows, cols));
  const columnSums = new Float32Array(buffer, pColumns, cols);
  const divisor = fround(grid.groupSize);
  return {
    name: 'wasm',
    step(): number {
      k.stepStrided(pW, pS, pZ, pColumns, rows, cols, chunkLength / 4, errorPower, cascadeLevelPower(rows), maxCode);
      for (const [begin, end] of ilpRanges) {
        k.ilpColumns(pW, pS, pZ, pColumns, rows, cols, begin, end, cascadeLevelPower(Math.floor(rows / 4)), maxCode);
      }
      for (let c = 0; c < cols; c++) z[c] = columnSums[c]! / divisor;
      zero.set(z);
      return readError();
    },
    codes(out: Uint8Array): void {
      k.codesStrided(pW, pS, pZ, pCodes, rows, cols, maxCode);
      out.set(new Uint8Array(buffer, pCodes, n));
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
