import type { KvDtype } from '../../tensor/kv-tensor.js';
import { E2M1, E4M3, E5M2 } from '../../quant/runtime-formats/minifloat.js';
import { IQ4_NL_VALUES } from '../../quant/runtime-formats/ggml-iq4-nl.js';
import { intAttribute, intsAttribute } from '../attributes.js';
import { OnnxDataType } from '../element-types.js';
import type { GraphEditor } from './graph-editor.js';

/**
 * The runtime KV formats (issue 27, app/quant/runtime-formats/) whose dequantization the graph computes
 * bit for bit from the runtime's own bytes. Each is table look-ups (Gather: exact) and the host's
 * float32 multiplies and adds in the host's order (each IEEE-rounded once, as `Math.fround` rounds
 * them), then one Cast to the model's dtype (round to nearest even, as roundToFloat16 and SeqBuffer do).
 * The others stay on the host, with the reason `graphFormatReason` gives.
 */
export const GRAPH_FORMATS: readonly string[] = [
  'llama.cpp:q8_0', 'llama.cpp:q4_0', 'llama.cpp:q4_1', 'llama.cpp:q5_0', 'llama.cpp:q5_1', 'llama.cpp:iq4_nl',
  'vllm:fp8_e4m3', 'vllm:fp8_e5m2', 'nvfp4',
];

/** Why a runtime format is dequantized on the host only (null: the graph path takes it). */
export function graphFormatReason(format: string): string | null {
  if (GRAPH_FORMATS.includes(format)) return null;
  if (format.endsWith('+rot')) {
    return `${format}: llama.cpp's inverse Hadamard rotation is a float32 butterfly whose rounding order the graph does not reproduce yet, so it stays on the host`;
  }
  if (format.startsWith('mlx:')) return `${format}: MLX's codes run across byte boundaries in uint32 words, which the graph does not unpack yet, so it stays on the host`;
  if (format.startsWith('ort-webgpu:')) {
    return `${format}: its per-row fp32 scale is stored as four bytes, which ONNX cannot reinterpret as a float (no bit cast), so it stays on the host`;
  }
  return `${format}: not a format the graph path knows`;
}

export interface FormatSideDequantize {
  readonly editor: GraphEditor;
  readonly scope: string;
  readonly format: string;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly dtype: KvDtype;
  /** uint8 `[tokens·kvHeads, rowBytes]`: the runtime's rows, token-major as the write-once cache keeps them */
  readonly codes: string;
  /** float32 `[1]`: the per-tensor scale (vLLM's k_scale/v_scale, NVFP4's global scale; 1 where none) */
  readonly tensorScale: string;
  /** an int64 `[1]` zero that exists only once the layer may start (layer-gate.ts); null: no gate */
  readonly gate: string | null;
}

/**
 * `deq(rows)` as `[1, kvHeads, tokens, headDim]` in T, and `tokens` (int64 `[1]`), from the runtime's
 * bytes; the store may be empty (the prefill), so every shape is read off the input.
 */
export function dequantizeFormatSide(d: FormatSideDequantize): { history: string; tokens: string } {
  const { editor: e, scope } = d;
  const reason = graphFormatReason(d.format);
  if (reason !== null) throw new Error(reason);
  const codes = d.gate === null ? d.codes : e.op(scope, 'Reshape', [d.codes, e.op(scope, 'Add', [e.op(scope, 'Shape', [d.codes]), d.gate])]);
  const rows = e.op(scope, 'Slice', [e.op(scope, 'Shape', [codes]), e.int64([0]), e.int64([1]), e.int64([0])]);
  // Gather takes int32 indices: every byte is an index into a table of 256 (or 65536) exact values
  const index = e.op(scope, 'Cast', [codes], [intAttribute('to', OnnxDataType.INT32)]);
  const values = d.format.startsWith('llama.cpp:') ? ggmlRows(d, index, rows)
    : d.format === 'nvfp4' ? nvfp4Rows(d, index, rows)
      : fp8Rows(d, index);
  const typed = d.dtype === 'float16' ? e.op(scope, 'Cast', [values], [intAttribute('to', OnnxDataType.FLOAT16)]) : values;
  // [tokens·H, D] token-major → [1, H, tokens, D]
  const tokens = e.op(scope, 'Div', [rows, e.int64([d.kvHeads])]);
  const byToken = e.op(scope, 'Reshape', [typed, e.op(scope, 'Concat', [tokens, e.int64([d.kvHeads, d.headDim])], [intAttribute('axis', 0)])]);
  const byHead = e.op(scope, 'Transpose', [byToken], [intsAttribute('perm', [1, 0, 2])]);
  const history = e.op(scope, 'Unsqueeze', [byHead, e.int64([0])]);
  return { history, tokens };
}

/**
 * ggml's blocks (ggml-blocks.ts): `[rows, blocks, blockBytes]`; the fp16 scales read through a table of
 * every binary16 bit pattern (Gather, then an exact Cast to float32); the codes through tables that
 * give each byte's low or high nibble (minus q4_0's 8 or q5_0's 16), q5's fifth bits through a table
 * of each byte's eight bits. y = q·d (q8_0, q4_0, q5_0, iq4_nl) or q·d + m (q4_1, q5_1), each op
 * rounded to float32 as the C reference rounds it (the products are exact).
 */
function ggmlRows(d: FormatSideDequantize, index: string, rows: string): string {
  const { editor: e, scope } = d;
  const type = d.format.slice('llama.cpp:'.length);
  const layout = GGML_LAYOUTS[type]!;
  const blocks = d.headDim / 32;
  const grid = e.op(scope, 'Reshape', [index, e.op(scope, 'Concat', [rows, e.int64([blocks, layout.blockBytes])], [intAttribute('axis', 0)])]);
  const bytes = (from: number, to: number): string => e.op(scope, 'Slice', [grid, e.int64([from]), e.int64([to]), e.int64([2])]);
  const half = (at: number): string => {
    const bits = e.op(scope, 'Add', [bytes(at, at + 1), e.op(scope, 'Mul', [bytes(at + 1, at + 2), int32(e, 256)])]);
    return e.op(scope, 'Cast', [e.op(scope, 'Gather', [table(e, 'binary16', [65536], ALL_HALVES), bits])], [intAttribute('to', OnnxDataType.FLOAT)]);
  }; // [rows, blocks, 1]
  const scale = half(0);
  const qs = bytes(layout.qsAt, layout.qsAt + 16);
  const offset = type === 'q4_0' ? 8 : type === 'q5_0' ? 16 : 0;
  let q: string;
  if (type === 'q8_0') {
    q = e.op(scope, 'Gather', [table(e, 'int8', [256], SIGNED_BYTES), bytes(2, 34)]);
  } else if (type === 'iq4_nl') {
    q = nibbles(e, scope, qs, 'iq4_nl', IQ4_NL_LOW, IQ4_NL_HIGH);
  } else {
    q = nibbles(e, scope, qs, `nibble-${offset}`, nibbleTable(false, offset), nibbleTable(true, offset));
  }
  if (type === 'q5_0' || type === 'q5_1') {
    // value j's fifth bit is bit j of the little-endian u32 qh: bit j % 8 of qh's byte j / 8
    const fifth = e.op(scope, 'Gather', [table(e, 'fifth-bits', [256, 8], FIFTH_BITS), bytes(layout.qsAt - 4, layout.qsAt)]); // [rows, blocks, 4, 8]
    q = e.op(scope, 'Add', [q, e.op(scope, 'Reshape', [fifth, e.op(scope, 'Concat', [rows, e.int64([blocks, 32])], [intAttribute('axis', 0)])])]);
  }
  let y = e.op(scope, 'Mul', [q, scale]);
  if (type === 'q4_1' || type === 'q5_1') y = e.op(scope, 'Add', [y, half(2)]);
  return e.op(scope, 'Reshape', [y, e.op(scope, 'Concat', [rows, e.int64([d.headDim])], [intAttribute('axis', 0)])]);
}

/** `[…, 16]` bytes → `[…, 32]` values: the low nibbles are values 0…15, the high ones 16…31 (ggml's layout). */
function nibbles(e: GraphEditor, scope: string, qs: string, label: string, low: Float32Array, high: Float32Array): string {
  const lo = e.op(scope, 'Gather', [table(e, `${label}-low`, [256], low), qs]);
  const hi = e.op(scope, 'Gather', [table(e, `${label}-high`, [256], high), qs]);
  return e.op(scope, 'Concat', [lo, hi], [intAttribute('axis', 2)]);
}

/** vLLM's FP8 (vllm-fp8.ts): fp8 → float exactly, then · scale rounded once to float32. */
function fp8Rows(d: FormatSideDequantize, index: string): string {
  const { editor: e, scope } = d;
  const e4m3 = d.format === 'vllm:fp8_e4m3';
  const value = e.op(scope, 'Gather', [table(e, e4m3 ? 'e4m3' : 'e5m2', [256], Float32Array.from(e4m3 ? E4M3.values : E5M2.values)), index]);
  return e.op(scope, 'Mul', [value, d.tensorScale]);
}

/**
 * NVFP4 (nvfp4.ts): headDim/2 code bytes (value 2k in the low nibble, 2k + 1 in the high one), then
 * headDim/16 e4m3 block scales; y = (e2m1 · e4m3) · s, the first product exact, one rounding after s.
 */
function nvfp4Rows(d: FormatSideDequantize, index: string, rows: string): string {
  const { editor: e, scope } = d;
  const half = d.headDim / 2;
  const blocks = d.headDim / 16;
  const codes = e.op(scope, 'Slice', [index, e.int64([0]), e.int64([half]), e.int64([1])]);
  const lo = e.op(scope, 'Unsqueeze', [e.op(scope, 'Gather', [table(e, 'e2m1-low', [256], E2M1_LOW), codes]), e.int64([2])]);
  const hi = e.op(scope, 'Unsqueeze', [e.op(scope, 'Gather', [table(e, 'e2m1-high', [256], E2M1_HIGH), codes]), e.int64([2])]);
  const interleaved = e.op(scope, 'Concat', [lo, hi], [intAttribute('axis', 2)]); // [rows, D/2, 2]
  const byBlock = e.op(scope, 'Reshape', [interleaved, e.op(scope, 'Concat', [rows, e.int64([blocks, 16])], [intAttribute('axis', 0)])]);
  const scaleBytes = e.op(scope, 'Slice', [index, e.int64([half]), e.int64([half + blocks]), e.int64([1])]);
  const blockScale = e.op(scope, 'Unsqueeze', [e.op(scope, 'Gather', [table(e, 'e4m3', [256], Float32Array.from(E4M3.values)), scaleBytes]), e.int64([2])]);
  const y = e.op(scope, 'Mul', [e.op(scope, 'Mul', [byBlock, blockScale]), d.tensorScale]);
  return e.op(scope, 'Reshape', [y, e.op(scope, 'Concat', [rows, e.int64([d.headDim])], [intAttribute('axis', 0)])]);
}

const GGML_LAYOUTS: Readonly<Record<string, { blockBytes: number; qsAt: number }>> = {
  q8_0: { blockBytes: 34, qsAt: 2 },
  q4_0: { blockBytes: 18, qsAt: 2 },
  q4_1: { blockBytes: 20, qsAt: 4 },
  q5_0: { blockBytes: 22, qsAt: 6 },
  q5_1: { blockBytes: 24, qsAt: 8 },
  iq4_nl: { blockBytes: 18, qsAt: 2 },
};

const ALL_HALVES = Uint16Array.from({ length: 65536 }, (_, bits) => bits);
const SIGNED_BYTES = Float32Array.from({ length: 256 }, (_, byte) => (byte << 24) >> 24);
const IQ4_NL_LOW = Float32Array.from({ length: 256 }, (_, byte) => IQ4_NL_VALUES[byte & 0x0f]!);
const IQ4_NL_HIGH = Float32Array.from({ length: 256 }, (_, byte) => IQ4_NL_VALUES[byte >>> 4]!);
const E2M1_LOW = Float32Array.from({ length: 256 }, (_, byte) => E2M1.values[byte & 0x0f]!);
const E2M1_HIGH = Float32Array.from({ length: 256 }, (_, byte) => E2M1.values[byte >>> 4]!);
/** byte → its eight bits, least significant first, each as 16 (q5's fifth bit's weight) or 0 */
const FIFTH_BITS = Float32Array.from({ length: 256 * 8 }, (_, i) => (((i >>> 3) >>> (i & 7)) & 1) * 16);

function nibbleTable(high: boolean, offset: number): Float32Array {
  return Float32Array.from({ length: 256 }, (_, byte) => (high ? byte >>> 4 : byte & 0x0f) - offset);
}

function int32(e: GraphEditor, value: number): string {
  return table(e, `int32-${value}`, [], Int32Array.of(value));
}

/** One initializer per table and graph, shared by every layer that reads it. */
const tables = new WeakMap<GraphEditor, Map<string, string>>();
function table(e: GraphEditor, label: string, dims: readonly number[], data: Float32Array | Uint16Array | Int32Array): string {
  let made = tables.get(e);
  if (made === undefined) tables.set(e, made = new Map());
  const existing = made.get(label);
  if (existing !== undefined) return existing;
  const name = e.freshValueName(`/kvscope/const/${label}`);
  e.initializer(name, dims, data);
  made.set(label, name);
  return name;
}
