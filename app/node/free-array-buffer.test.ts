import { describe, expect, it } from 'vitest';
import { wasmApi } from '../wasm/wasm-runtime.js';
import { freeArrayBuffer } from './free-array-buffer.js';

describe('freeArrayBuffer', () => {
  it('detaches the buffer and releases its memory from V8\'s account at once', () => {
    const bytes = 64 * 2 ** 20;
    const buffer = new ArrayBuffer(bytes);
    const view = new Float32Array(buffer);
    view.fill(1);
    const before = process.memoryUsage().arrayBuffers;
    freeArrayBuffer(buffer);
    expect(buffer.byteLength).toBe(0);
    expect(view.length).toBe(0);
    expect(before - process.memoryUsage().arrayBuffers).toBeGreaterThanOrEqual(bytes);
  });

  it('leaves empty and shared buffers alone', () => {
    const shared = new SharedArrayBuffer(16);
    freeArrayBuffer(shared);
    expect(shared.byteLength).toBe(16);
    const empty = new ArrayBuffer(0);
    expect(() => freeArrayBuffer(empty)).not.toThrow();
  });
});

describe('freeArrayBuffer on a buffer that cannot be detached', () => {
  it('leaves it to the garbage collector instead of throwing', () => {
    // A WebAssembly memory's buffer cannot be detached by user code.
    const memory = new (wasmApi()!.Memory)({ initial: 1 });
    expect(() => freeArrayBuffer(memory.buffer)).not.toThrow();
    expect(memory.buffer.byteLength).toBe(65536);
  });
});
