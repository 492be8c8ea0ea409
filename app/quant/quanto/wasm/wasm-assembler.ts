/**
 * A minimal WebAssembly binary writer: just enough of the format (core spec §5, SIMD proposal opcode
 * table) to emit the quanto kernels without a toolchain or a download. Instructions are byte arrays;
 * a function body is a flat list of them. Only the opcodes the kernels use are listed.
 */
export type Code = readonly number[];

export const i32 = 0x7f;
export const f32 = 0x7d;
export const v128 = 0x7b;
export type ValueType = typeof i32 | typeof f32 | typeof v128;

/** `count` consecutive local indices from `first` */
export function localRange(first: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => first + i);
}

export function uleb(value: number): number[] {
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

export function sleb(value: number): number[] {
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

const EMPTY_BLOCK = 0x40;
/** memarg: alignment exponent, then a constant byte offset. */
const mem = (align: number, offset: number): number[] => [...uleb(align), ...uleb(offset)];
const simd = (opcode: number, ...immediates: number[]): Code => [0xfd, ...uleb(opcode), ...immediates];

/** Core instructions. */
export const op = {
  block: [0x02, EMPTY_BLOCK] as Code,
  loop: [0x03, EMPTY_BLOCK] as Code,
  if: [0x04, EMPTY_BLOCK] as Code,
  end: [0x0b] as Code,
  br: (depth: number): Code => [0x0c, ...uleb(depth)],
  brIf: (depth: number): Code => [0x0d, ...uleb(depth)],
  localGet: (index: number): Code => [0x20, ...uleb(index)],
  localSet: (index: number): Code => [0x21, ...uleb(index)],
  localTee: (index: number): Code => [0x22, ...uleb(index)],
  i32Const: (value: number): Code => [0x41, ...sleb(value)],
  f32Const: (value: number): Code => [0x43, ...new Uint8Array(new Float32Array([value]).buffer)],
  i32Load8U: (offset = 0): Code => [0x2d, ...mem(0, offset)],
  i32Store8: (offset = 0): Code => [0x3a, ...mem(0, offset)],
  f32Load: (offset = 0): Code => [0x2a, ...mem(2, offset)],
  f32Store: (offset = 0): Code => [0x38, ...mem(2, offset)],
  i32Eq: [0x46] as Code,
  i32And: [0x71] as Code,
  i32Load: (offset = 0): Code => [0x28, ...mem(0, offset)],
  i32Store: (offset = 0): Code => [0x36, ...mem(0, offset)],
  i32GeU: [0x4f] as Code,
  i32Add: [0x6a] as Code,
  i32Mul: [0x6c] as Code,
  i32Or: [0x72] as Code,
  i32Xor: [0x73] as Code,
  i32Shl: [0x74] as Code,
  i32ShrS: [0x75] as Code,
  i32ShrU: [0x76] as Code,
  f32Ne: [0x5c] as Code,
  f32Neg: [0x8c] as Code,
  f32Add: [0x92] as Code,
  f32Sub: [0x93] as Code,
  f32Div: [0x95] as Code,
  f32ConvertI32U: [0xb3] as Code,
  f32ReinterpretI32: [0xbe] as Code,
};

/** SIMD instructions (0xfd prefix). */
export const vop = {
  load: (offset = 0): Code => simd(0x00, ...mem(0, offset)),
  store: (offset = 0): Code => simd(0x0b, ...mem(0, offset)),
  i8x16Shuffle: (lanes: readonly number[]): Code => simd(0x0d, ...lanes),
  i8x16Splat: simd(0x0f),
  i32x4Splat: simd(0x11),
  f32x4Splat: simd(0x13),
  i32x4ExtractLane: (lane: number): Code => simd(0x1b, lane),
  i32x4ReplaceLane: (lane: number): Code => simd(0x1c, lane),
  i32x4LtS: simd(0x39),
  i32x4GtS: simd(0x3b),
  f32x4Eq: simd(0x41),
  f32x4Ne: simd(0x42),
  and: simd(0x4e),
  or: simd(0x50),
  xor: simd(0x51),
  bitselect: simd(0x52),
  anyTrue: simd(0x53),
  i8x16NarrowI16x8U: simd(0x66),
  i8x16Shl: simd(0x6b),
  i8x16ShrU: simd(0x6d),
  i16x8NarrowI32x4S: simd(0x85),
  i16x8ExtendLowI8x16U: simd(0x89),
  i16x8ExtendHighI8x16U: simd(0x8a),
  i32x4ExtendLowI16x8U: simd(0xa9),
  i32x4ExtendHighI16x8U: simd(0xaa),
  i32x4Shl: simd(0xab),
  i32x4ShrS: simd(0xac),
  i32x4ShrU: simd(0xad),
  i32x4MinS: simd(0xb6),
  i32x4MaxS: simd(0xb8),
  f32x4Neg: simd(0xe1),
  f32x4Add: simd(0xe4),
  f32x4Sub: simd(0xe5),
  f32x4Mul: simd(0xe6),
  f32x4Div: simd(0xe7),
  f32x4Pmin: simd(0xea),
  f32x4ConvertI32x4S: simd(0xfa),
  i32x4Add: simd(0xae),
  f32x4ExtractLane: (lane: number): Code => simd(0x1f, lane),
};

/** `for (counter; counter < limit; counter += step) body`, with unsigned compares; locals are indices. */
export function forRange(counter: number, limit: number, step: number, body: readonly Code[]): Code[] {
  return [
    op.block, op.loop,
    op.localGet(counter), op.localGet(limit), op.i32GeU, op.brIf(1),
    ...body,
    op.localGet(counter), op.i32Const(step), op.i32Add, op.localSet(counter),
    op.br(0),
    op.end, op.end,
  ];
}

/** `for (counter = 0; counter < count; counter++) body`, with a constant count. */
export function repeat(counter: number, count: number, body: readonly Code[]): Code[] {
  return [
    op.i32Const(0), op.localSet(counter),
    op.block, op.loop,
    op.localGet(counter), op.i32Const(count), op.i32GeU, op.brIf(1),
    ...body,
    op.localGet(counter), op.i32Const(1), op.i32Add, op.localSet(counter),
    op.br(0),
    op.end, op.end,
  ];
}

/** `local += value` */
export function addTo(local: number, value: Code): Code[] {
  return [op.localGet(local), value, op.i32Add, op.localSet(local)];
}

export interface WasmFunction {
  readonly name: string;
  readonly params: readonly ValueType[];
  readonly results: readonly ValueType[];
  /** extra locals, indexed after the parameters */
  readonly locals: readonly ValueType[];
  readonly body: readonly Code[];
}

/** A module with one exported memory ("memory", `pages` × 64 KiB to start) and the exported functions. */
export function assembleModule(functions: readonly WasmFunction[], pages: number): Uint8Array {
  const vec = (items: readonly number[][]): number[] => [...uleb(items.length), ...items.flat()];
  const name = (s: string): number[] => [...uleb(s.length), ...Array.from(s, (ch) => ch.charCodeAt(0))];
  const section = (id: number, content: number[]): number[] => [id, ...uleb(content.length), ...content];

  const types = functions.map((f) => [0x60, ...uleb(f.params.length), ...f.params, ...uleb(f.results.length), ...f.results]);
  const typeIndices = functions.map((_, i) => uleb(i));
  const memory = [[0x00, ...uleb(pages)]];
  const exports = [
    [...name('memory'), 0x02, 0x00],
    ...functions.map((f, i) => [...name(f.name), 0x00, ...uleb(i)]),
  ];
  const bodies = functions.map((f) => {
    const groups: number[][] = [];
    for (const type of f.locals) {
      const last = groups[groups.length - 1];
      if (last !== undefined && last[1] === type) last[0]!++;
      else groups.push([1, type]);
    }
    const code = [...uleb(groups.length), ...groups.flatMap(([count, type]) => [...uleb(count!), type!]), ...f.body.flat(), 0x0b];
    return [...uleb(code.length), ...code];
  });
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec(types)),
    ...section(3, vec(typeIndices)),
    ...section(5, vec(memory)),
    ...section(7, vec(exports)),
    ...section(10, vec(bodies)),
  ]);
}
