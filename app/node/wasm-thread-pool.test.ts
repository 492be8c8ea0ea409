import { afterEach, describe, expect, it } from 'vitest';
import binaryen from 'binaryen';
import { wasmApi } from '../wasm/wasm-runtime.js';
import type { WasmParallelRunner } from '../wasm/wasm-threads.js';
import { claim, createWasmThreadPool, isNewerGeneration } from './wasm-thread-pool.js';

const api = wasmApi()!;

/** fill(address, count, value): count i32 stores; trap(): unreachable via an out-of-bounds store */
const TEST_MODULE = `(module
  (import "env" "memory" (memory 1 2 shared))
  (func (export "fill") (param $address i32) (param $count i32) (param $value i32) (local $i i32)
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
      (i32.store (i32.add (local.get $address) (i32.shl (local.get $i) (i32.const 2))) (local.get $value))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next))))
  (func (export "trap") (i32.store (i32.const -4) (i32.const 0))))`;

/** The test module, assembled from its text by binaryen (the compiler AssemblyScript uses). */
function testModule(): { module: object; memory: { buffer: ArrayBufferLike }; exports: Record<string, unknown> } {
  const parsed = binaryen.parseText(TEST_MODULE);
  parsed.setFeatures(binaryen.Features.All);
  const bytes = parsed.emitBinary();
  parsed.dispose();
  const module = new api.Module(bytes);
  const memory = new api.Memory({ initial: 1, maximum: 2, shared: true });
  return { module, memory, exports: new api.Instance(module, { env: { memory } }).exports };
}

const runners: WasmParallelRunner[] = [];
afterEach(() => {
  for (const runner of runners.splice(0)) runner.close();
});

describe('WebAssembly thread pool on worker_threads', () => {
  it('runs a call on a helper thread while the caller runs its own, on one shared memory', () => {
    const { module, memory, exports } = testModule();
    const runner = createWasmThreadPool(1).attach(module, { env: { memory } })!;
    expect(runner).not.toBeNull();
    runners.push(runner);
    const fill = exports['fill'] as (a: number, n: number, v: number) => void;
    const words = new Int32Array(memory.buffer, 0, 2048);
    for (let round = 1; round <= 50; round++) {
      runner.run([{ name: 'fill', args: [4096, 1024, round] }], () => fill(0, 1024, -round));
      expect(words.subarray(0, 1024).every((w) => w === -round)).toBe(true);
      expect(words.subarray(1024).every((w) => w === round)).toBe(true);
    }
    // no call for the helper: only the local part runs
    runner.run([], () => fill(0, 1, 7));
    expect(words[0]).toBe(7);
  });

  it('finishes calls its helper has not started itself, with the same result', () => {
    const { module, memory } = testModule();
    const runner = createWasmThreadPool(1).attach(module, { env: { memory } })!;
    runners.push(runner);
    const words = new Int32Array(memory.buffer, 0, 1024);
    // nothing to do locally: the caller races its helper for the call, round after round
    for (let round = 1; round <= 500; round++) {
      runner.run([{ name: 'fill', args: [0, 1024, round] }], () => undefined);
      expect(words[0]).toBe(round);
      expect(words[1023]).toBe(round);
    }
  });

  it('reports a helper failure and a local one, and refuses to run once closed', () => {
    const { module, memory, exports } = testModule();
    const runner = createWasmThreadPool(1).attach(module, { env: { memory } })!;
    runners.push(runner);
    // whoever runs it (the helper, or the caller if it gets there first), a failing call throws
    expect(() => runner.run([{ name: 'trap', args: [] }], () => undefined)).toThrow(/trap failed on a helper thread|out of bounds/);
    expect(() => runner.run([{ name: 'fill', args: [0, 1, 1] }], () => (exports['trap'] as () => void)())).toThrow();
    expect(() => runner.run([{ name: 'fill', args: [0, 1, 1] }, { name: 'fill', args: [0, 1, 1] }], () => undefined)).toThrow(/2 calls for 1 helper/);
    expect(() => runner.run([{ name: 'missing', args: [] }], () => undefined)).toThrow(/cannot run missing/);
    runner.run([{ name: 'fill', args: [0, 1, 5] }], () => undefined); // still usable after failures
    expect(new Int32Array(memory.buffer, 0, 1)[0]).toBe(5);
    runner.close();
    expect(() => runner.run([], () => undefined)).toThrow(/closed/);
  });

  it('declines what it cannot share, and a pool without helpers', () => {
    const { module } = testModule();
    expect(createWasmThreadPool(1).attach(module, { env: { memory: new api.Memory({ initial: 1 }), log: () => undefined } })).toBeNull();
    expect(createWasmThreadPool(0).attach(module, {})).toBeNull();
  });
});

describe('claims of a helper\'s call', () => {
  const SLOT = 16; // SLOT_BASE: slot 0's words; CLAIM is its sixth
  it('go to one thread per generation and only forward: a helper that slept through g cannot claim it over g+1', () => {
    const ctl = new Int32Array(new SharedArrayBuffer(1024));
    expect(claim(ctl, SLOT, 1)).toBe(true); // the helper takes generation 1
    expect(claim(ctl, SLOT, 1)).toBe(false); // the caller then finds it taken
    expect(claim(ctl, SLOT, 2)).toBe(true); // the caller takes 2 itself (the helper was late)
    expect(claim(ctl, SLOT, 3)).toBe(true); // and 3
    // the late helper wakes with generation 2 read before it slept: the claim must fail, or it would
    // run generation 3's call beside the caller
    expect(claim(ctl, SLOT, 2)).toBe(false);
    expect(claim(ctl, SLOT, 3)).toBe(false);
    expect(claim(ctl, SLOT, 4)).toBe(true);
  });

  it('order generations across the wrap back to 1', () => {
    expect(isNewerGeneration(1, 0)).toBe(true);
    expect(isNewerGeneration(1, 0x3fffffff)).toBe(true);
    expect(isNewerGeneration(0x3fffffff, 1)).toBe(false);
    expect(isNewerGeneration(5, 5)).toBe(false);
    expect(isNewerGeneration(4, 5)).toBe(false);
  });
});
