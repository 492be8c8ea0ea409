/**
 * kvscope's WebAssembly (MVP + fixed-width SIMD + shared memory) binary encoder, shared by the quanto
 * kernels (quant/quanto/wasm) and the HQQ kernels (quant/hqq).
 *
 * Why hand-rolled: kvscope ships no binary blobs and installs no compiler, yet both quantizers need
 * native float32 SIMD. Kernels are assembled at runtime from the instruction tables below.
 * Binary format: https://webassembly.github.io/spec/core/binary/ (opcodes are named as in the spec).
 *
 * Two ways to write code, over one opcode table:
 * - `ins`: raw instructions in stack order (operands already pushed), for postfix-style kernels
 *   (`ins.localGet(x), ins.v128Load(16), ins.f32x4Add`);
 * - expression builders (`f32x4.add(a, b)`, `v128.load(addr, 16)`, `get`, `set`, `block`, …) that
 *   take their operands as code and emit them first. `STACK` stands for operands already pushed.
 *
 * Code is a tree of bytes in stack order, flattened once per function, so composing large kernels never
 * copies bytes.
 */
export type Code = readonly CodeItem[];
type CodeItem = number | Code;

/** Operands already on the stack (an empty operand for the expression builders). */
export const STACK: Code = [];

export function flatten(code: Code, out: number[] = []): number[] {
  for (const item of code) {
    if (typeof item === 'number') out.push(item);
    else flatten(item, out);
  }
  return out;
}

export const ValType = {
  I32: 0x7f,
  I64: 0x7e,
  F32: 0x7d,
  F64: 0x7c,
  V128: 0x7b,
} as const;
export type ValType = (typeof ValType)[keyof typeof ValType];

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

function littleEndian(array: Float32Array | Float64Array | Int32Array): number[] {
  return [...new Uint8Array(array.buffer)];
}

/** memarg: log2 of the alignment hint, then the constant byte offset */
const memarg = (alignLog2: number, offset: number): number[] => [...unsignedLeb(alignLog2), ...unsignedLeb(offset)];
const simd = (opcode: number, ...immediates: number[]): number[] => [0xfd, ...unsignedLeb(opcode), ...immediates];
/** a memory access with its natural alignment */
const access = (opcode: number, alignLog2: number) => (offset = 0): Code => [opcode, memarg(alignLog2, offset)];
const simdAccess = (opcode: number, alignLog2: number) => (offset = 0): Code => [simd(opcode), memarg(alignLog2, offset)];
const simdLaneAccess = (opcode: number, alignLog2: number) => (lane: number, offset = 0): Code => [simd(opcode), memarg(alignLog2, offset), lane];
const simdLane = (opcode: number) => (lane: number): Code => simd(opcode, lane);

const EMPTY_BLOCK = 0x40;

/**
 * Raw instructions: plain constants for those without immediates, functions of the immediates for the
 * others. The one opcode table of the encoder (union of what the kernels use).
 */
export const ins = {
  // control (blocks are typed "empty"; values travel through locals)
  block: [0x02, EMPTY_BLOCK] as Code,
  loop: [0x03, EMPTY_BLOCK] as Code,
  if: [0x04, EMPTY_BLOCK] as Code,
  else: [0x05] as Code,
  end: [0x0b] as Code,
  br: (depth: number): Code => [0x0c, unsignedLeb(depth)],
  brIf: (depth: number): Code => [0x0d, unsignedLeb(depth)],
  localGet: (index: number): Code => [0x20, unsignedLeb(index)],
  localSet: (index: number): Code => [0x21, unsignedLeb(index)],
  localTee: (index: number): Code => [0x22, unsignedLeb(index)],
  // memory
  i32Load: access(0x28, 2),
  f32Load: access(0x2a, 2),
  i32Load8U: access(0x2d, 0),
  i32Store: access(0x36, 2),
  f32Store: access(0x38, 2),
  i32Store8: access(0x3a, 0),
  // constants
  i32Const: (value: number): Code => [0x41, signedLeb(value)],
  f32Const: (value: number): Code => [0x43, littleEndian(new Float32Array([value]))],
  // i32
  i32Eqz: [0x45] as Code,
  i32Eq: [0x46] as Code,
  i32Ne: [0x47] as Code,
  i32LtU: [0x49] as Code,
  i32GtU: [0x4b] as Code,
  i32GeU: [0x4f] as Code,
  i32Add: [0x6a] as Code,
  i32Sub: [0x6b] as Code,
  i32Mul: [0x6c] as Code,
  i32DivU: [0x6e] as Code,
  i32And: [0x71] as Code,
  i32Or: [0x72] as Code,
  i32Xor: [0x73] as Code,
  i32Shl: [0x74] as Code,
  i32ShrS: [0x75] as Code,
  i32ShrU: [0x76] as Code,
  // f32
  f32Ne: [0x5c] as Code,
  f32Add: [0x92] as Code,
  f32Sub: [0x93] as Code,
  f32Div: [0x95] as Code,
  /** IEEE minimum / maximum: NaN propagates, −0 < +0 */
  f32Min: [0x96] as Code,
  f32Max: [0x97] as Code,
  // conversions
  f32ConvertI32U: [0xb3] as Code,
  f32ReinterpretI32: [0xbe] as Code,
  // v128 memory, constants, shuffles
  v128Load: simdAccess(0x00, 4),
  v128Store: simdAccess(0x0b, 4),
  /** 16 bytes, little-endian lanes */
  v128Const: (bytes: readonly number[]): Code => [simd(0x0c), bytes],
  /** byte k of the result is byte `lanes[k]` of a ‖ b (0..31) */
  i8x16Shuffle: (lanes: readonly number[]): Code => [simd(0x0d), lanes],
  i8x16Splat: simd(0x0f) as Code,
  i32x4Splat: simd(0x11) as Code,
  f32x4Splat: simd(0x13) as Code,
  i32x4ExtractLane: simdLane(0x1b),
  i32x4ReplaceLane: simdLane(0x1c),
  f32x4ExtractLane: simdLane(0x1f),
  f32x4ReplaceLane: simdLane(0x20),
  // comparisons (all-ones lanes where true)
  i32x4LtS: simd(0x39) as Code,
  i32x4GtS: simd(0x3b) as Code,
  f32x4Eq: simd(0x41) as Code,
  f32x4Ne: simd(0x42) as Code,
  f32x4Ge: simd(0x46) as Code,
  // bitwise
  v128And: simd(0x4e) as Code,
  v128Or: simd(0x50) as Code,
  v128Xor: simd(0x51) as Code,
  v128Bitselect: simd(0x52) as Code,
  v128AnyTrue: simd(0x53) as Code,
  // lane loads and stores
  v128Load64Lane: simdLaneAccess(0x57, 3),
  v128Store32Lane: simdLaneAccess(0x5a, 2),
  /** 4 bytes into lane 0, the rest zeroed */
  v128Load32Zero: simdAccess(0x5c, 2),
  /** 8 bytes into lane 0, lane 1 zeroed */
  v128Load64Zero: simdAccess(0x5d, 3),
  /** [f32(a0), f32(a1), 0, 0], round to nearest even */
  f32x4DemoteF64x2Zero: simd(0x5e) as Code,
  // i8x16 / i16x8
  i8x16NarrowI16x8U: simd(0x66) as Code,
  i8x16Shl: simd(0x6b) as Code,
  i8x16ShrU: simd(0x6d) as Code,
  i16x8NarrowI32x4S: simd(0x85) as Code,
  i16x8NarrowI32x4U: simd(0x86) as Code,
  i16x8ExtendLowI8x16U: simd(0x89) as Code,
  i16x8ExtendHighI8x16U: simd(0x8a) as Code,
  // i32x4
  i32x4ExtendLowI16x8U: simd(0xa9) as Code,
  i32x4ExtendHighI16x8U: simd(0xaa) as Code,
  i32x4Shl: simd(0xab) as Code,
  i32x4ShrS: simd(0xac) as Code,
  i32x4ShrU: simd(0xad) as Code,
  i32x4Add: simd(0xae) as Code,
  i32x4Sub: simd(0xb1) as Code,
  i32x4MinS: simd(0xb6) as Code,
  i32x4MaxS: simd(0xb8) as Code,
  // f32x4 (IEEE binary32, round to nearest even)
  /** round half to even */
  f32x4Nearest: simd(0x6a) as Code,
  f32x4Abs: simd(0xe0) as Code,
  f32x4Neg: simd(0xe1) as Code,
  f32x4Add: simd(0xe4) as Code,
  f32x4Sub: simd(0xe5) as Code,
  f32x4Mul: simd(0xe6) as Code,
  f32x4Div: simd(0xe7) as Code,
  f32x4Min: simd(0xe8) as Code,
  f32x4Max: simd(0xe9) as Code,
  /** pmin(a, b) = b < a ? b : a (one instruction; NaN-unsafe) */
  f32x4Pmin: simd(0xea) as Code,
  /** pmax(a, b) = a < b ? b : a */
  f32x4Pmax: simd(0xeb) as Code,
  // f64x2
  f64x2Add: simd(0xf0) as Code,
  f64x2Mul: simd(0xf2) as Code,
  // conversions
  i32x4TruncSatF32x4U: simd(0xf9) as Code,
  f32x4ConvertI32x4S: simd(0xfa) as Code,
  f32x4ConvertI32x4U: simd(0xfb) as Code,
  f64x2ConvertLowI32x4S: simd(0xfe) as Code,
};

// ------------------------------------------------------------------------------------------------
// Expression builders: operands first (in push order), then the instruction.

/** A local variable or parameter: an index, or a typed handle from FunctionBuilder. */
export interface Local {
  readonly index: number;
  readonly type: ValType;
}
export type LocalRef = Local | number;
const indexOf = (l: LocalRef): number => (typeof l === 'number' ? l : l.index);

/** An instruction without immediates as a function of its operands. */
const expr = (instruction: Code) => (...operands: Code[]): Code => [operands, instruction];

export const get = (l: LocalRef): Code => ins.localGet(indexOf(l));
export const set = (l: LocalRef, value: Code = STACK): Code => [value, ins.localSet(indexOf(l))];
export const tee = (l: LocalRef, value: Code = STACK): Code => [value, ins.localTee(indexOf(l))];

export const block = (...body: Code[]): Code => [ins.block, body, ins.end];
export const loop = (...body: Code[]): Code => [ins.loop, body, ins.end];
export const ifThen = (cond: Code, ...body: Code[]): Code => [cond, ins.if, body, ins.end];
export const ifElse = (cond: Code, then: readonly Code[], otherwise: readonly Code[]): Code => [cond, ins.if, then, ins.else, otherwise, ins.end];
export const br = (depth: number): Code => ins.br(depth);
export const brIf = (depth: number, cond: Code = STACK): Code => [cond, ins.brIf(depth)];
export const seq = (...parts: Code[]): Code => parts;

export const i32 = {
  const: ins.i32Const,
  load: (addr: Code, offset = 0): Code => [addr, ins.i32Load(offset)],
  store: (addr: Code, value: Code, offset = 0): Code => [addr, value, ins.i32Store(offset)],
  load8u: (addr: Code, offset = 0): Code => [addr, ins.i32Load8U(offset)],
  store8: (addr: Code, value: Code, offset = 0): Code => [addr, value, ins.i32Store8(offset)],
  eqz: expr(ins.i32Eqz),
  eq: expr(ins.i32Eq),
  ne: expr(ins.i32Ne),
  ltU: expr(ins.i32LtU),
  gtU: expr(ins.i32GtU),
  geU: expr(ins.i32GeU),
  add: expr(ins.i32Add),
  sub: expr(ins.i32Sub),
  mul: expr(ins.i32Mul),
  divU: expr(ins.i32DivU),
  and: expr(ins.i32And),
  or: expr(ins.i32Or),
  xor: expr(ins.i32Xor),
  shl: expr(ins.i32Shl),
  shrS: expr(ins.i32ShrS),
  shrU: expr(ins.i32ShrU),
};

export const f32 = {
  const: ins.f32Const,
  load: (addr: Code, offset = 0): Code => [addr, ins.f32Load(offset)],
  store: (addr: Code, value: Code, offset = 0): Code => [addr, value, ins.f32Store(offset)],
  ne: expr(ins.f32Ne),
  add: expr(ins.f32Add),
  sub: expr(ins.f32Sub),
  div: expr(ins.f32Div),
  min: expr(ins.f32Min),
  max: expr(ins.f32Max),
  convertI32U: expr(ins.f32ConvertI32U),
  reinterpretI32: expr(ins.f32ReinterpretI32),
};

export const v128 = {
  load: (addr: Code, offset = 0): Code => [addr, ins.v128Load(offset)],
  store: (addr: Code, value: Code, offset = 0): Code => [addr, value, ins.v128Store(offset)],
  load32Zero: (addr: Code, offset = 0): Code => [addr, ins.v128Load32Zero(offset)],
  load64Zero: (addr: Code, offset = 0): Code => [addr, ins.v128Load64Zero(offset)],
  /** replaces 64-bit lane `lane` of `vector` with 8 bytes from memory */
  load64Lane: (addr: Code, vector: Code, lane: number, offset = 0): Code => [addr, vector, ins.v128Load64Lane(lane, offset)],
  /** stores 32-bit lane `lane` of `value` */
  store32Lane: (addr: Code, value: Code, lane: number, offset = 0): Code => [addr, value, ins.v128Store32Lane(lane, offset)],
  /** byte k of the result is byte `lanes[k]` of a ‖ b (0..31) */
  shuffle: (a: Code, b: Code, lanes: readonly number[]): Code => [a, b, ins.i8x16Shuffle(lanes)],
  and: expr(ins.v128And),
  or: expr(ins.v128Or),
  xor: expr(ins.v128Xor),
  /** bitselect(a, b, mask): bits of a where mask is 1, of b elsewhere */
  bitselect: expr(ins.v128Bitselect),
  anyTrue: expr(ins.v128AnyTrue),
  /** `bytes` must hold 16 bytes (little-endian lanes) */
  const: ins.v128Const,
  f32x4Const: (a: number, b: number, c: number, d: number): Code => ins.v128Const(littleEndian(new Float32Array([a, b, c, d]))),
  i32x4Const: (a: number, b: number, c: number, d: number): Code => ins.v128Const(littleEndian(new Int32Array([a, b, c, d]))),
};

export const f32x4 = {
  splat: expr(ins.f32x4Splat),
  extractLane: (v: Code, lane: number): Code => [v, ins.f32x4ExtractLane(lane)],
  replaceLane: (v: Code, lane: number, value: Code): Code => [v, value, ins.f32x4ReplaceLane(lane)],
  eq: expr(ins.f32x4Eq),
  ne: expr(ins.f32x4Ne),
  ge: expr(ins.f32x4Ge),
  nearest: expr(ins.f32x4Nearest),
  abs: expr(ins.f32x4Abs),
  neg: expr(ins.f32x4Neg),
  add: expr(ins.f32x4Add),
  sub: expr(ins.f32x4Sub),
  mul: expr(ins.f32x4Mul),
  div: expr(ins.f32x4Div),
  min: expr(ins.f32x4Min),
  max: expr(ins.f32x4Max),
  pmin: expr(ins.f32x4Pmin),
  pmax: expr(ins.f32x4Pmax),
  convertI32x4S: expr(ins.f32x4ConvertI32x4S),
  convertI32x4U: expr(ins.f32x4ConvertI32x4U),
  demoteF64x2Zero: expr(ins.f32x4DemoteF64x2Zero),
};

export const f64x2 = {
  add: expr(ins.f64x2Add),
  mul: expr(ins.f64x2Mul),
  /** exact */
  convertLowI32x4S: expr(ins.f64x2ConvertLowI32x4S),
};

export const i32x4 = {
  splat: expr(ins.i32x4Splat),
  extractLane: (v: Code, lane: number): Code => [v, ins.i32x4ExtractLane(lane)],
  replaceLane: (v: Code, lane: number, value: Code): Code => [v, value, ins.i32x4ReplaceLane(lane)],
  ltS: expr(ins.i32x4LtS),
  gtS: expr(ins.i32x4GtS),
  shl: expr(ins.i32x4Shl),
  shrS: expr(ins.i32x4ShrS),
  shrU: expr(ins.i32x4ShrU),
  add: expr(ins.i32x4Add),
  sub: expr(ins.i32x4Sub),
  minS: expr(ins.i32x4MinS),
  maxS: expr(ins.i32x4MaxS),
  truncSatF32x4U: expr(ins.i32x4TruncSatF32x4U),
  extendLowI16x8U: expr(ins.i32x4ExtendLowI16x8U),
  extendHighI16x8U: expr(ins.i32x4ExtendHighI16x8U),
};

export const i16x8 = {
  narrowI32x4S: expr(ins.i16x8NarrowI32x4S),
  narrowI32x4U: expr(ins.i16x8NarrowI32x4U),
  extendLowI8x16U: expr(ins.i16x8ExtendLowI8x16U),
  extendHighI8x16U: expr(ins.i16x8ExtendHighI8x16U),
};

export const i8x16 = {
  splat: expr(ins.i8x16Splat),
  narrowI16x8U: expr(ins.i8x16NarrowI16x8U),
  shl: expr(ins.i8x16Shl),
  shrU: expr(ins.i8x16ShrU),
};

// ------------------------------------------------------------------------------------------------
// Functions and modules

/** One function of a module: parameters are locals 0.., then `locals` follow. */
export interface WasmFunction {
  readonly name: string;
  readonly params: readonly ValType[];
  readonly results: readonly ValType[];
  readonly locals: readonly ValType[];
  readonly body: Code;
}

/** A function under construction with typed local handles: parameters first, then locals on demand. */
export class FunctionBuilder {
  readonly params: readonly Local[];
  private readonly localTypes: ValType[] = [];
  private readonly body: Code[] = [];

  constructor(
    readonly name: string,
    paramTypes: readonly ValType[],
    readonly results: readonly ValType[] = [],
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

  build(): WasmFunction {
    return { name: this.name, params: this.params.map((p) => p.type), results: this.results, locals: [...this.localTypes], body: this.body };
  }
}

/**
 * The module's one memory: its own, exported under `export`, or imported as `import[0].import[1]`
 * (`shared` needs `maxPages`; threads then share it). Sizes in 64 KiB pages.
 */
export type ModuleMemory =
  | { readonly export: string; readonly pages: number }
  | { readonly import: readonly [module: string, name: string]; readonly pages: number; readonly maxPages?: number; readonly shared?: boolean };

function vector(items: readonly Code[]): number[] {
  return flatten([unsignedLeb(items.length), items]);
}

function nameBytes(name: string): number[] {
  const bytes = Array.from(name, (c) => c.charCodeAt(0));
  return [...unsignedLeb(bytes.length), ...bytes];
}

function section(id: number, content: readonly number[]): number[] {
  return [id, ...unsignedLeb(content.length), ...content];
}

function limits(memory: { readonly pages: number; readonly maxPages?: number; readonly shared?: boolean }): number[] {
  if (memory.shared === true && memory.maxPages === undefined) throw new Error('a shared memory needs maxPages');
  const flags = (memory.maxPages === undefined ? 0 : 1) | (memory.shared === true ? 2 : 0);
  return [flags, ...unsignedLeb(memory.pages), ...(memory.maxPages === undefined ? [] : unsignedLeb(memory.maxPages))];
}

function functionBody(f: WasmFunction): number[] {
  // locals are declared as runs of one type: (count, type) pairs
  const runs: [number, ValType][] = [];
  for (const t of f.locals) {
    const last = runs[runs.length - 1];
    if (last !== undefined && last[1] === t) last[0]++;
    else runs.push([1, t]);
  }
  const code = flatten([unsignedLeb(runs.length), runs.map(([n, t]) => [unsignedLeb(n), t]), f.body, ins.end]);
  return [...unsignedLeb(code.length), ...code];
}

/** Encodes a module with one memory (see ModuleMemory) that exports every function by name. */
export function encodeModule(functions: readonly WasmFunction[], memory: ModuleMemory): Uint8Array {
  const types = section(1, vector(functions.map((f) => [0x60, vector(f.params.map((p) => [p])), vector(f.results.map((r) => [r]))])));
  const imports = 'import' in memory
    ? section(2, vector([[nameBytes(memory.import[0]), nameBytes(memory.import[1]), 0x02, limits(memory)]]))
    : [];
  const funcs = section(3, vector(functions.map((_, i) => unsignedLeb(i))));
  const memories = 'export' in memory ? section(5, vector([limits(memory)])) : [];
  const exports = section(7, vector([
    ...('export' in memory ? [[nameBytes(memory.export), 0x02, 0x00]] : []),
    ...functions.map((f, i) => [nameBytes(f.name), 0x00, unsignedLeb(i)]),
  ]));
  const code = section(10, vector(functions.map(functionBody)));
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...types, ...imports, ...funcs, ...memories, ...exports, ...code]);
}

// ------------------------------------------------------------------------------------------------
// Loop helpers for stack-order (`ins`) code; each returns a list of instructions to spread.

/** `while (counter < limit) { body; counter += step }` with an unsigned compare. */
export function forRange(counter: LocalRef, limit: LocalRef, step: number, body: readonly Code[]): Code[] {
  return [
    ins.block, ins.loop,
    get(counter), get(limit), ins.i32GeU, ins.brIf(1),
    ...body,
    ...addTo(counter, ins.i32Const(step)),
    ins.br(0),
    ins.end, ins.end,
  ];
}

/** `for (counter = 0; counter < count; counter++) body`, with a constant count. */
export function repeat(counter: LocalRef, count: number, body: readonly Code[]): Code[] {
  return [
    ins.i32Const(0), set(counter),
    ins.block, ins.loop,
    get(counter), ins.i32Const(count), ins.i32GeU, ins.brIf(1),
    ...body,
    ...addTo(counter, ins.i32Const(1)),
    ins.br(0),
    ins.end, ins.end,
  ];
}

/** `local += value` (i32) */
export function addTo(local: LocalRef, value: Code): Code[] {
  return [get(local), value, ins.i32Add, set(local)];
}
