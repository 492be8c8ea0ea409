import type { KvDtype } from '../../../tensor/kv-tensor.js';
import { paramCount, type GroupLayout } from '../grouping.js';
import { codeMax } from '../max-optimizer.js';
import { packedRowCount } from '../packing.js';
import type { QuantoCodes } from '../quanto-codes.js';
import { QUANTO_SIMD_WASM } from '../../../wasm/built/quanto-simd.js';
import { WASM_PAGE_BYTES, wasmApi, type WasmMemory } from '../../../wasm/wasm-runtime.js';

/**
 * Drives the WebAssembly SIMD kernels, float32 and float16 variants. Their source is AssemblyScript
 * (app/wasm/kernels/quanto-simd.ts), built into app/wasm/built/quanto-simd.ts by app/wasm/kernels/build.mjs.
 *
 * Module memory, in bytes (16-aligned regions):
 *   [scratch: 10·D floats][chunk: ≤ CHUNK_BYTES of input (quantize) or output (dequantize)]
 *   [scale: groups floats][shift: groups floats][packed: ceil(rows / (8 / bits))·cols bytes]
 * The input streams through the chunk in whole groups (axis 0) or whole token blocks (axis −1), so
 * the module holds the small packed result, never a second copy of the tensor. The memory grows
 * to the largest tensor seen and is kept for the next call (WebAssembly memory cannot shrink):
 * about N·bits/8 + 8·N/g bytes plus 1 MiB.
 */
export interface SimdKernels {
  /** Whether the kernels handle this layout (axis 0: g a multiple of 16; axis −1: head_dim a multiple of 4). */
  supports(layout: GroupLayout): boolean;
  /** null when the input holds NaN or ±Inf */
  quantize(x: Float32Array, dtype: KvDtype, layout: GroupLayout, bits: number): QuantoCodes | null;
  dequantize(
    packed: Uint8Array, scale: Float32Array, shift: Float32Array, dtype: KvDtype, layout: GroupLayout, bits: number, out: Float32Array,
  ): void;
}

// About the L2 size (1 MiB here): measured on the reference tensor, 1 MiB chunks dequantize ~20% faster
// than 256 KiB ones (fewer, longer copies out of the module) and quantize as fast.
const CHUNK_BYTES = 1024 * 1024;
const PAGE_BYTES = WASM_PAGE_BYTES;
const MAX_MEMORY_BYTES = 2 ** 31 - PAGE_BYTES; // keeps every i32 address computation positive

/** One dtype's kernels (app/wasm/kernels/quanto-simd.ts documents each). */
interface Kernels {
  quantizeRows(x: number, groups: number, g: number, qmax: number, bitShift: number, dst: number, scale: number, shift: number): number;
  quantizeColumns(
    x: number, blockCount: number, a0: number, g: number, channels: number, blocks: number, qmax: number, bits: number,
    rowDim: number, packed: number, scale: number, shift: number, scratch: number,
  ): number;
  dequantizeRows(packed: number, groups: number, g: number, bitShift: number, mask: number, scale: number, shift: number, out: number): void;
  dequantizeColumns(
    packed: number, blockCount: number, a0: number, g: number, channels: number, blocks: number, rowDim: number, bits: number,
    mask: number, scale: number, shift: number, scratch: number, out: number,
  ): void;
  /** quantizeColumns for 4·quadCount blocks, four at a time */
  quantizeColumnQuads(
    x: number, quadCount: number, a0: number, g: number, channels: number, blocks: number, qmax: number, bits: number,
    rowDim: number, packed: number, scale: number, shift: number, scratch: number,
  ): number;
  dequantizeColumnQuads(
    packed: number, quadCount: number, a0: number, g: number, channels: number, blocks: number, rowDim: number, bits: number,
    mask: number, scale: number, shift: number, scratch: number, out: number,
  ): void;
}

const KERNEL_NAMES = ['quantizeRows', 'quantizeColumns', 'quantizeColumnQuads', 'dequantizeRows', 'dequantizeColumns', 'dequantizeColumnQuads'] as const;

/** Export name of a kernel: float16 variants end in "Half". */
function kernelName(base: string, dtype: KvDtype): string {
  return dtype === 'float16' ? `${base}Half` : base;
}

function kernelsOf(exports: Record<string, unknown>, dtype: KvDtype): Kernels {
  return Object.fromEntries(KERNEL_NAMES.map((name) => [name, exports[kernelName(name, dtype)]])) as unknown as Kernels;
}

let cached: SimdKernels | null | undefined;

/**
 * The SIMD kernels, or null where WebAssembly SIMD is unavailable (an old runtime, a page whose
 * Content-Security-Policy forbids compiling WebAssembly, or a browser main thread, where Chrome
 * refuses to compile modules over 4 KB synchronously; workers have no such limit). Callers then use
 * the plain kernels, which give the same bits.
 */
export function simdKernels(): SimdKernels | null {
  if (cached !== undefined) return cached;
  cached = null;
  const api = wasmApi();
  if (api === undefined) return cached;
  try {
    const exports = new api.Instance(new api.Module(QUANTO_SIMD_WASM), {}).exports as Record<string, unknown>;
    cached = new SimdRuntime(exports['memory'] as WasmMemory, kernelsOf(exports, 'float32'), kernelsOf(exports, 'float16'));
  } catch {
    cached = null; // CompileError (no SIMD) or a CSP refusal: the plain kernels give the same bits
  }
  return cached;
}

interface Regions {
  readonly scratch: number;
  readonly chunk: number;
  readonly scale: number;
  readonly shift: number;
  readonly packed: number;
  readonly packedBytes: number;
  /** groups (axis 0) or token blocks (axis −1) per chunk */
  readonly unitsPerChunk: number;
  /** input floats per group (axis 0) or per token block (axis −1) */
  readonly unitFloats: number;
  readonly end: number;
}

const align16 = (n: number): number => Math.ceil(n / 16) * 16;

function regionsOf(layout: GroupLayout, bits: number, params: number): Regions {
  const unitFloats = layout.paramsPerColumn ? layout.rows * layout.channels : layout.cols;
  const fitting = Math.floor(CHUNK_BYTES / (unitFloats * 4));
  // column layouts move whole quads of token blocks (quantizeColumnQuads), so at least and by 4
  const unitsPerChunk = layout.paramsPerColumn ? Math.max(4, fitting - (fitting % 4)) : Math.max(1, fitting);
  const scratch = 0;
  // columns: min keys, max keys [D] each, then the quad scale and shift [4·D] each
  const chunk = align16(scratch + 40 * layout.channels);
  const scale = align16(chunk + unitsPerChunk * unitFloats * 4);
  const shift = align16(scale + params * 4);
  const packed = align16(shift + params * 4);
  const packedBytes = packedRowCount(layout.rows, bits) * layout.cols;
  return { scratch, chunk, scale, shift, packed, packedBytes, unitsPerChunk, unitFloats, end: packed + packedBytes };
}

class SimdRuntime implements SimdKernels {
  constructor(
    private readonly memory: WasmMemory,
    private readonly float32: Kernels,
    private readonly float16: Kernels,
  ) {}

  supports(layout: GroupLayout): boolean {
    const shapeFits = layout.paramsPerColumn ? layout.channels % 4 === 0 : layout.cols % 16 === 0;
    if (!shapeFits) return false;
    return regionsOf(layout, 2, paramCount(layout)).end <= MAX_MEMORY_BYTES; // 2 bits is the larger of the two packings
  }

  quantize(x: Float32Array, dtype: KvDtype, layout: GroupLayout, bits: number): QuantoCodes | null {
    const params = paramCount(layout);
    const m = regionsOf(layout, bits, params);
    const { floats, bytes } = this.views(m.end);
    bytes.fill(0, m.packed, m.end); // codes are OR-ed into their bit slots
    const k = dtype === 'float16' ? this.float16 : this.float32;
    const qmax = codeMax(bits);
    const rowDim = packedRowCount(layout.rows, bits);
    let nonFinite = 0;
    if (layout.paramsPerColumn) {
      const { rows: g, channels, blocks } = layout;
      for (let a0 = 0; a0 < blocks; a0 += m.unitsPerChunk) {
        const a1 = Math.min(blocks, a0 + m.unitsPerChunk);
        floats.set(x.subarray(a0 * m.unitFloats, a1 * m.unitFloats), m.chunk / 4);
        // chunks start on a multiple of 4 blocks; only the last may end with 1–3 single blocks
        const quads = (a1 - a0) >> 2;
        const tail = a0 + 4 * quads;
        nonFinite |= k.quantizeColumnQuads(m.chunk, quads, a0, g, channels, blocks, qmax, bits, rowDim, m.packed, m.scale, m.shift, m.scratch);
        nonFinite |= k.quantizeColumns(
          m.chunk + (tail - a0) * m.unitFloats * 4, a1 - tail, tail, g, channels, blocks, qmax, bits, rowDim, m.packed, m.scale, m.shift, m.scratch,
        );
      }
    } else {
      const { rows: groups, cols: g } = layout;
      for (let r0 = 0; r0 < groups;) {
        // a chunk never straddles two bit slots: rows r0 … r1−1 share ⌊r / rowDim⌋
        const r1 = Math.min(groups, r0 + m.unitsPerChunk, (Math.floor(r0 / rowDim) + 1) * rowDim);
        floats.set(x.subarray(r0 * g, r1 * g), m.chunk / 4);
        nonFinite |= k.quantizeRows(
          m.chunk, r1 - r0, g, qmax, bits * Math.floor(r0 / rowDim), m.packed + (r0 % rowDim) * g, m.scale + 4 * r0, m.shift + 4 * r0,
        );
        r0 = r1;
      }
    }
    if (nonFinite !== 0) return null;
    return {
      packed: bytes.slice(m.packed, m.end),
      scale: floats.slice(m.scale / 4, m.scale / 4 + params),
      shift: floats.slice(m.shift / 4, m.shift / 4 + params),
    };
  }

  dequantize(
    packed: Uint8Array, scale: Float32Array, shift: Float32Array, dtype: KvDtype, layout: GroupLayout, bits: number, out: Float32Array,
  ): void {
    const m = regionsOf(layout, bits, scale.length);
    const { floats, bytes } = this.views(m.end);
    bytes.set(packed, m.packed);
    floats.set(scale, m.scale / 4);
    floats.set(shift, m.shift / 4);
    const k = dtype === 'float16' ? this.float16 : this.float32;
    const mask = codeMax(bits);
    const rowDim = packedRowCount(layout.rows, bits);
    if (layout.paramsPerColumn) {
      const { rows: g, channels, blocks } = layout;
      for (let a0 = 0; a0 < blocks; a0 += m.unitsPerChunk) {
        const a1 = Math.min(blocks, a0 + m.unitsPerChunk);
        const quads = (a1 - a0) >> 2;
        const tail = a0 + 4 * quads;
        k.dequantizeColumnQuads(m.packed, quads, a0, g, channels, blocks, rowDim, bits, mask, m.scale, m.shift, m.scratch, m.chunk);
        k.dequantizeColumns(
          m.packed, a1 - tail, tail, g, channels, blocks, rowDim, bits, mask, m.scale, m.shift, m.scratch, m.chunk + (tail - a0) * m.unitFloats * 4,
        );
        out.set(floats.subarray(m.chunk / 4, m.chunk / 4 + (a1 - a0) * m.unitFloats), a0 * m.unitFloats);
      }
      return;
    }
    const { rows: groups, cols: g } = layout;
    for (let r0 = 0; r0 < groups;) {
      const r1 = Math.min(groups, r0 + m.unitsPerChunk, (Math.floor(r0 / rowDim) + 1) * rowDim);
      k.dequantizeRows(
        m.packed + (r0 % rowDim) * g, r1 - r0, g, bits * Math.floor(r0 / rowDim), mask, m.scale + 4 * r0, m.shift + 4 * r0, m.chunk,
      );
      out.set(floats.subarray(m.chunk / 4, m.chunk / 4 + (r1 - r0) * g), r0 * g);
      r0 = r1;
    }
  }

  /** Fresh views over the module memory, grown to `bytes` first (growing detaches the old buffer). */
  private views(bytes: number): { floats: Float32Array; bytes: Uint8Array } {
    const memory = this.memory;
    const missing = bytes - memory.buffer.byteLength;
    if (missing > 0) memory.grow(Math.ceil(missing / PAGE_BYTES));
    return { floats: new Float32Array(memory.buffer), bytes: new Uint8Array(memory.buffer) };
  }
}
