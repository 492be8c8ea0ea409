import { describe, expect, it } from 'vitest';
import { FunctionBuilder, ValType, encodeModule, f32x4, get, signedLeb, unsignedLeb, v128 } from './wasm-builder.js';
import type { Local } from './wasm-builder.js';

/** `WebAssembly` without DOM typings (the project compiles with ES2023 + Node types only). */
interface WasmRuntime {
  Memory: new (descriptor: { initial: number }) => { readonly buffer: ArrayBuffer };
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmRuntime }).WebAssembly;

describe('WebAssembly encoder', () => {
  it('encodes LEB128 integers', () => {
    expect(unsignedLeb(0)).toEqual([0]);
    expect(unsignedLeb(127)).toEqual([127]);
    expect(unsignedLeb(128)).toEqual([0x80, 1]);
    expect(unsignedLeb(624485)).toEqual([0xe5, 0x8e, 0x26]);
    expect(signedLeb(-1)).toEqual([0x7f]);
    expect(signedLeb(63)).toEqual([63]);
    expect(signedLeb(64)).toEqual([0xc0, 0]);
    expect(signedLeb(-64)).toEqual([0x40]);
    expect(signedLeb(-123456)).toEqual([0xc0, 0xbb, 0x78]);
  });

  it('builds a module that runs: a SIMD round-half-even over memory', () => {
    const fb = new FunctionBuilder('roundAt', [ValType.I32], []);
    const [address] = fb.params as [Local];
    fb.emit(v128.store(get(address), f32x4.nearest(v128.load(get(address)))));
    const memory = new wasm.Memory({ initial: 1 });
    const instance = new wasm.Instance(new wasm.Module(encodeModule([fb], 1)), { env: { memory } });
    const values = new Float32Array(memory.buffer, 16, 4);
    values.set([0.5, 1.5, 2.5, -0.5]);
    (instance.exports['roundAt'] as (a: number) => void)(16);
    expect(Array.from(values)).toEqual([0, 2, 2, -0]);
  });
});
