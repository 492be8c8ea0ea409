import { describe, expect, it } from 'vitest';
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
