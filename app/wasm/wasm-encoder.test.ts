import { describe, expect, it } from 'vitest';
import {
  FunctionBuilder, STACK, ValType, addTo, block, br, brIf, encodeModule, f32x4, flatten, forRange, get, i32, ifElse, ins, loop,
  set, signedLeb, unsignedLeb, v128,
} from './wasm-encoder.js';
import type { Local } from './wasm-encoder.js';
import { wasmApi } from './wasm-runtime.js';

const api = wasmApi()!;

describe('WebAssembly encoder', () => {
  it('encodes LEB128 integers', () => {
    expect(unsignedLeb(0)).toEqual([0]);
    expect(unsignedLeb(127)).toEqual([127]);
    expect(unsignedLeb(128)).toEqual([0x80, 1]);
    expect(unsignedLeb(624485)).toEqual([0xe5, 0x8e, 0x26]);
    expect(signedLeb(0)).toEqual([0]);
    expect(signedLeb(-1)).toEqual([0x7f]);
    expect(signedLeb(63)).toEqual([63]);
    expect(signedLeb(64)).toEqual([0xc0, 0]);
    expect(signedLeb(-64)).toEqual([0x40]);
    expect(signedLeb(-65)).toEqual([0xbf, 0x7f]);
    expect(signedLeb(-123456)).toEqual([0xc0, 0xbb, 0x78]);
  });

  it('writes the same bytes in stack order and as expressions', () => {
    const [a, b] = [0, 1];
    const postfix = [ins.localGet(a), ins.v128Load(16), ins.localGet(b), ins.f32x4Splat, ins.f32x4Add, ins.localSet(b)];
    const expression = set(b, f32x4.add(v128.load(get(a), 16), f32x4.splat(get(b))));
    expect(flatten(postfix)).toEqual(flatten(expression));
    expect(flatten(set(a, STACK))).toEqual(flatten(ins.localSet(a)));
    // v128.load is the 0xfd prefix, opcode 0, align 2^4, offset 16
    expect(flatten(ins.v128Load(16))).toEqual([0xfd, 0x00, 4, 16]);
  });

  it('builds a module with its own exported memory that runs: a summing loop (stack order)', () => {
    const [start, end, sum] = [0, 1, 2];
    const bytes = encodeModule([{
      name: 'sumBytes',
      params: [ValType.I32, ValType.I32],
      results: [ValType.I32],
      locals: [ValType.I32],
      body: [
        ...forRange(start, end, 1, [...addTo(sum, [ins.localGet(start), ins.i32Load8U()])]),
        ins.localGet(sum),
      ],
    }], { export: 'memory', pages: 1 });
    const exports = new api.Instance(new api.Module(bytes)).exports as { memory: { buffer: ArrayBuffer }; sumBytes: (a: number, b: number) => number };
    new Uint8Array(exports.memory.buffer).set([1, 2, 3, 250], 10);
    expect(exports.sumBytes(10, 14)).toBe(256);
    expect(exports.sumBytes(14, 14)).toBe(0);
  });

  it('builds a module importing its memory that runs: SIMD round-half-even, then a branch (expressions)', () => {
    const fb = new FunctionBuilder('roundAt', [ValType.I32], [ValType.I32]);
    const [address] = fb.params as [Local];
    const count = fb.local(ValType.I32);
    const result = fb.local(ValType.I32);
    fb.emit(
      v128.store(get(address), f32x4.nearest(v128.load(get(address)))),
      block(loop(brIf(1, i32.geU(get(count), i32.const(3))), set(count, i32.add(get(count), i32.const(1))), br(0))),
      ifElse(i32.eq(get(count), i32.const(3)), [set(result, i32.const(7))], [set(result, i32.const(8))]), // blocks are typed empty
      get(result),
    );
    const memory = new api.Memory({ initial: 1 });
    const instance = new api.Instance(new api.Module(encodeModule([fb.build()], { import: ['env', 'memory'], pages: 1 })), { env: { memory } });
    const values = new Float32Array(memory.buffer, 16, 4);
    values.set([0.5, 1.5, 2.5, -0.5]);
    expect((instance.exports['roundAt'] as (a: number) => number)(16)).toBe(7);
    expect(Array.from(values)).toEqual([0, 2, 2, -0]);
  });

  it('imports a shared memory that two instances use at once', () => {
    const fb = new FunctionBuilder('increment', [ValType.I32]);
    const [address] = fb.params as [Local];
    fb.emit(i32.store(get(address), i32.add(i32.load(get(address)), i32.const(1))));
    const module = new api.Module(encodeModule([fb.build()], { import: ['env', 'memory'], pages: 1, maxPages: 4, shared: true }));
    const memory = new api.Memory({ initial: 1, maximum: 4, shared: true });
    expect(memory.buffer).toBeInstanceOf(SharedArrayBuffer);
    const first = new api.Instance(module, { env: { memory } }).exports['increment'] as (a: number) => void;
    const second = new api.Instance(module, { env: { memory } }).exports['increment'] as (a: number) => void;
    first(64);
    second(64);
    expect(new Int32Array(memory.buffer, 64, 1)[0]).toBe(2);
    // a shared memory import refuses an unshared memory
    expect(() => new api.Instance(module, { env: { memory: new api.Memory({ initial: 1 }) } })).toThrow();
    expect(() => encodeModule([], { import: ['env', 'memory'], pages: 1, shared: true })).toThrow(/maxPages/);
  });
});
