/**
 * A minimal WebAssembly (MVP + fixed-width SIMD) encoder: just what the HQQ kernels need.
 *
 * Why hand-rolled: kvscope ships no binary blobs and installs no compiler, yet the HQQ optimizer
 * needs native float32 SIMD to beat the Python reference by 5x (spec §3.2 step 3 is ~20 passes of
 * float32 elementwise work). Kernels are written as expression trees of `Code` (byte arrays in stack
 * order); `encodeModule` wraps them into a module that imports one memory.
 * Binary format: https://webassembly.github.io/spec/core/binary/ (opcodes cited by name below).
 */
/**
 * Code is a tree of bytes in stack order; it is flattened once per function (`flatten`), so composing
 * large kernels never copies bytes.
 */
export type Code = readonly CodeItem[];
type CodeItem = number | Code;

export function flatten(code: Code, out: number[] = []): number[] {
  for (const item of code) {
    if (typeof item === 'number') out.push(item);
    else flatten(item, out);
  }
  return out;
}

export const enum ValType {
  I32 = 0x7f,
  I64 = 0x7e,
  F32 = 0x7d,
  F64 = 0x7c,
  V128 = 0x7b,
}

export function unsignedLeb(value: number): number[] {
  const out: number[] = [];
  let v = value >>> 0;
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
  return out;
}

export function signedLeb(value: number): number[] {
  const out: number[] = [];
  let v = value | 0;
  for (;;) {
    const byte = v & 0x7f;
    v >>= 7;
    const done = (v === 0 && (byte & 0x40) === 0) || (v === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

/** An operator that pops its operands (given in push order) and appends its opcode bytes. */
function op(...opcode: number[]): (...operands: Code[]) => Code {
  return (...operands) => [operands, opcode];
}

function simd(code: number): number[] {
  return [0xfd, ...unsignedLeb(code)];
}

function simdOp(code: number): (...operands: Code[]) => Code {
  return op(...simd(code));
}

function memarg(alignLog2: number, offset: number): number[] {
  return [...unsignedLeb(alignLog2), ...unsignedLeb(offset)];
}

function f32Bytes(value: number): number[] {
  return [...new Uint8Array(new Float32Array([value]).buffer)];
}

function f64Bytes(value: number): number[] {
  return [...new Uint8Array(new Float64Array([value]).buffer)];
}

/** A local variable (or parameter) of a function under construction. */
export interface Local {
  readonly index: number;
  readonly type: ValType;
}

export const get = (l: Local): Code => [0x20, unsignedLeb(l.index)];
export const set = (l: Local, value: Code): Code => [value, 0x21, unsignedLeb(l.index)];
export const tee = (l: Local, value: Code): Code => [value, 0x22, unsignedLeb(l.index)];

// Control flow. Blocks are typed "empty" (0x40); values travel through locals.
export const block = (...body: Code[]): Code => [0x02, 0x40, body, 0x0b];
export const loop = (...body: Code[]): Code => [0x03, 0x40, body, 0x0b];
export const ifThen = (cond: Code, ...body: Code[]): Code => [cond, 0x04, 0x40, body, 0x0b];
export const ifElse = (cond: Code, then: Code[], otherwise: Code[]): Code => [cond, 0x04, 0x40, then, 0x05, otherwise, 0x0b];
export const br = (depth: number): Code => [0x0c, unsignedLeb(depth)];
export const brIf = (depth: number, cond: Code): Code => [cond, 0x0d, unsignedLeb(depth)];
export const seq = (...parts: Code[]): Code => parts;

export const i32 = {
  const: (v: number): Code => [0x41, signedLeb(v)],
  load: (addr: Code, offset = 0): Code => [addr, 0x28, memarg(2, offset)],
  store: (addr: Code, value: Code, offset = 0): Code => [addr, value, 0x36, memarg(2, offset)],
  load8u: (addr: Code, offset = 0): Code => [addr, 0x2d, memarg(0, offset)],
  store8: (addr: Code, value: Code, offset = 0): Code => [addr, value, 0x3a, memarg(0, offset)],
  eqz: op(0x45),
  eq: op(0x46),
  ne: op(0x47),
  ltU: op(0x49),
  gtU: op(0x4b),
  geU: op(0x4f),
  add: op(0x6a),
  sub: op(0x6b),
  mul: op(0x6c),
  divU: op(0x6e),
  and: op(0x71),
  or: op(0x72),
  shl: op(0x74),
  shrU: op(0x76),
  reinterpretF32: op(0xbc),
};

export const f32 = {
  const: (v: number): Code => [0x43, f32Bytes(v)],
  load: (addr: Code, offset = 0): Code => [addr, 0x2a, memarg(2, offset)],
  store: (addr: Code, value: Code, offset = 0): Code => [addr, value, 0x38, memarg(2, offset)],
  add: op(0x92),
  sub: op(0x93),
  mul: op(0x94),
  div: op(0x95),
  /** IEEE minimum / maximum: NaN propagates, −0 < +0 */
  min: op(0x96),
  max: op(0x97),
};

export const f64 = {
  const: (v: number): Code => [0x44, f64Bytes(v)],
  load: (addr: Code, offset = 0): Code => [addr, 0x2b, memarg(3, offset)],
  add: op(0xa0),
  sub: op(0xa1),
  mul: op(0xa2),
  convertI32U: op(0xb8),
  promoteF32: op(0xbb),
};

export const v128 = {
  load: (addr: Code, offset = 0): Code => [addr, simd(0x00), memarg(4, offset)],
  store: (addr: Code, value: Code, offset = 0): Code => [addr, value, simd(0x0b), memarg(4, offset)],
  /** Loads 4 bytes into lane 0 and zeroes the rest (v128.load32_zero). */
  load32Zero: (addr: Code, offset = 0): Code => [addr, simd(0x5c), memarg(2, offset)],
  store32Lane0: (addr: Code, value: Code, offset = 0): Code => [addr, value, simd(0x5a), memarg(2, offset), 0],
  /** Loads 8 bytes into lane 0 and zeroes lane 1 (v128.load64_zero). */
  load64Zero: (addr: Code, offset = 0): Code => [addr, simd(0x5d), memarg(3, offset)],
  /** Replaces 64-bit lane `lane` of `vector` with 8 bytes from memory (v128.load64_lane). */
  load64Lane: (addr: Code, vector: Code, lane: number, offset = 0): Code => [addr, vector, simd(0x57), memarg(3, offset), lane],
  /** i8x16.shuffle: byte k of the result is byte `lanes[k]` of a ‖ b (0..31). */
  shuffle: (a: Code, b: Code, lanes: readonly number[]): Code => [a, b, simd(0x0d), lanes],
  not: simdOp(0x4d),
  and: simdOp(0x4e),
  andNot: simdOp(0x4f),
  or: simdOp(0x50),
  anyTrue: simdOp(0x53),
  /** `bytes` must hold 16 bytes (little-endian lanes). */
  const: (bytes: readonly number[]): Code => [simd(0x0c), bytes],
  f32x4Const: (a: number, b: number, c: number, d: number): Code =>
    [simd(0x0c), f32Bytes(a), f32Bytes(b), f32Bytes(c), f32Bytes(d)],
  i32x4Const: (a: number, b: number, c: number, d: number): Code =>
    [simd(0x0c), [...new Uint8Array(new Int32Array([a, b, c, d]).buffer)]],
};

export const f32x4 = {
  splat: simdOp(0x13),
  extractLane: (v: Code, lane: number): Code => [v, simd(0x1f), lane],
  replaceLane: (v: Code, lane: number, value: Code): Code => [v, value, simd(0x20), lane],
  ge: simdOp(0x46),
  nearest: simdOp(0x6a),
  abs: simdOp(0xe0),
  add: simdOp(0xe4),
  sub: simdOp(0xe5),
  mul: simdOp(0xe6),
  div: simdOp(0xe7),
  min: simdOp(0xe8),
  max: simdOp(0xe9),
  /** pmin(a, b) = b < a ? b : a (one instruction; no NaN can reach it here) */
  pmin: simdOp(0xea),
  /** pmax(a, b) = a < b ? b : a */
  pmax: simdOp(0xeb),
  convertI32x4U: simdOp(0xfb),
};

export const f64x2 = {
  add: simdOp(0xf0),
  mul: simdOp(0xf2),
  /** exact for the small non-negative integers it is used on */
  convertLowI32x4S: simdOp(0xfe),
  /** [f32(a0), f32(a1), 0, 0] with round-to-nearest-even */
  demoteZeroToF32x4: simdOp(0x5e),
};

export const i32x4 = {
  splat: simdOp(0x11),
  sub: simdOp(0xb1),
  ltU: simdOp(0x3a),
  allTrue: simdOp(0xa3),
  shl: simdOp(0xab),
  shrU: simdOp(0xad),
  extractLane: (v: Code, lane: number): Code => [v, simd(0x1b), lane],
  truncSatF32x4U: simdOp(0xf9),
  extendLowI16x8U: simdOp(0xa9),
  extendHighI16x8U: simdOp(0xaa),
};

export const i16x8 = {
  narrowI32x4U: simdOp(0x86),
  extendLowI8x16U: simdOp(0x89),
  extendHighI8x16U: simdOp(0x8a),
};

export const i8x16 = {
  narrowI16x8U: simdOp(0x66),
  splat: simdOp(0x0f),
  shl: simdOp(0x6b),
  shrU: simdOp(0x6d),
};

/** A function under construction: parameters first, then locals declared on demand. */
export class FunctionBuilder {
  readonly params: Local[];
  private readonly localTypes: ValType[] = [];
  private readonly body: Code[] = [];

  constructor(
    readonly name: string,
    paramTypes: readonly ValType[],
    readonly results: readonly ValType[],
  ) {
    this.params = paramTypes.map((type, index) => ({ index, type }));
  }

  local(type: ValType): Local {
    const local = { index: this.params.length + this.localTypes.length, type };
    this.localTypes.push(type);
    return local;
  }

  emit(...code: Code[]): void {
    this.body.push(...code);
  }

  encodeBody(): number[] {
    // Locals are declared as runs of one type: (count, type) pairs.
    const runs: [number, ValType][] = [];
    for (const t of this.localTypes) {
      const last = runs[runs.length - 1];
      if (last !== undefined && last[1] === t) last[0]++;
      else runs.push([1, t]);
    }
    const locals = [...unsignedLeb(runs.length), ...runs.flatMap(([n, t]) => [...unsignedLeb(n), t])];
    const code = flatten([locals, this.body, 0x0b]);
    return [...unsignedLeb(code.length), ...code];
  }

  typeSignature(): number[] {
    return [0x60, ...vector(this.params.map((p) => [p.type])), ...vector(this.results.map((r) => [r]))];
  }
}

function vector(items: readonly Code[]): number[] {
  return flatten([unsignedLeb(items.length), items]);
}

function nameBytes(name: string): number[] {
  const bytes = [...name].map((c) => c.charCodeAt(0));
  return [...unsignedLeb(bytes.length), ...bytes];
}

function section(id: number, content: readonly number[]): number[] {
  return [id, ...unsignedLeb(content.length), ...content];
}

/** Encodes a module that imports `env.memory` (min `memoryPages` pages) and exports every function by name. */
export function encodeModule(functions: readonly FunctionBuilder[], memoryPages: number): Uint8Array {
  const types = section(1, vector(functions.map((f) => f.typeSignature())));
  const imports = section(2, vector([[...nameBytes('env'), ...nameBytes('memory'), 0x02, 0x00, ...unsignedLeb(memoryPages)]]));
  const funcs = section(3, vector(functions.map((_, i) => unsignedLeb(i))));
  const exports = section(7, vector(functions.map((f, i) => [...nameBytes(f.name), 0x00, ...unsignedLeb(i)])));
  const code = section(10, vector(functions.map((f) => f.encodeBody())));
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...types, ...imports, ...funcs, ...exports, ...code]);
}
