import { describe, expect, it } from 'vitest';
import { assembleModule, forRange, i32, op, sleb, uleb } from './wasm-assembler.js';

interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}

describe('wasm assembler', () => {
  it('encodes LEB128 as the binary format requires', () => {
    expect(uleb(0)).toEqual([0]);
    expect(uleb(127)).toEqual([127]);
    expect(uleb(128)).toEqual([0x80, 0x01]);
    expect(uleb(624485)).toEqual([0xe5, 0x8e, 0x26]);
    expect(sleb(0)).toEqual([0]);
    expect(sleb(63)).toEqual([63]);
    expect(sleb(64)).toEqual([0xc0, 0x00]);
    expect(sleb(-1)).toEqual([0x7f]);
    expect(sleb(-64)).toEqual([0x40]);
    expect(sleb(-65)).toEqual([0xbf, 0x7f]);
    expect(sleb(-123456)).toEqual([0xc0, 0xbb, 0x78]);
  });

  it('emits a module that validates and runs: a summing loop over its memory', () => {
    const [start, end, sum] = [0, 1, 2];
    const bytes = assembleModule([{
      name: 'sumBytes',
      params: [i32, i32],
      results: [i32],
      locals: [i32],
      body: [
        ...forRange(start, end, 1, [op.localGet(sum), op.localGet(start), op.i32Load8U(), op.i32Add, op.localSet(sum)]),
        op.localGet(sum),
      ],
    }], 1);
    // @types/node declares WebAssembly as a type namespace only; reach the runtime object untyped
    const api = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
    const instance = new api.Instance(new api.Module(bytes), {});
    const exports = instance.exports as { memory: { buffer: ArrayBuffer }; sumBytes: (a: number, b: number) => number };
    new Uint8Array(exports.memory.buffer).set([1, 2, 3, 250], 10);
    expect(exports.sumBytes(10, 14)).toBe(256);
    expect(exports.sumBytes(14, 14)).toBe(0);
  });
});
