import { Worker } from 'node:worker_threads';
import type { WasmImports, WasmModule } from '../wasm/wasm-runtime.js';
import type { KernelCall, WasmParallelRunner, WasmThreadPool } from '../wasm/wasm-threads.js';

/**
 * app/wasm/wasm-threads.ts's thread pool on Node worker_threads. Each `attach` starts its own helper
 * threads, which instantiate the module with the (shared) imports and then wait on a shared control
 * block: `run` writes each helper's call there, wakes them with Atomics.notify, runs its own part and
 * blocks in Atomics.wait until every helper has answered. Synchronous, so a caller like the quantizer
 * keeps its synchronous API; one round trip costs tens of microseconds.
 *
 * Helpers are unref'd (they never keep the process alive) and stop with `close()`.
 */
const MAX_ARGS = 32;
/** Control block (Int32Array): [0] generation (−1 = stop), then 8 int32 per helper from SLOT_BASE. */
const SLOT_BASE = 16;
const SLOT_INTS = 8;
const DONE = 0;
const FUNCTION = 1;
const ARG_COUNT = 2;
const STATUS = 3;
const READY = 4;
const ARGS_AT = 1024;
const START_TIMEOUT_MS = 20_000;

/** The helper thread (CommonJS, evaluated): kept free of imports so it needs no loader. */
const HELPER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { module, imports, control, index, argsAt, maxArgs } = workerData;
const ctl = new Int32Array(control);
const slot = ${SLOT_BASE} + index * ${SLOT_INTS};
const args = new Float64Array(control, argsAt + index * maxArgs * 8, maxArgs);
let functions = [];
try {
  const exports = new WebAssembly.Instance(module, imports).exports;
  functions = WebAssembly.Module.exports(module).map((e) => exports[e.name]);
  Atomics.store(ctl, slot + ${READY}, 1);
} catch {
  Atomics.store(ctl, slot + ${READY}, -1);
}
Atomics.notify(ctl, slot + ${READY});
let seen = Atomics.load(ctl, 0);
while (Atomics.load(ctl, slot + ${READY}) === 1) {
  Atomics.wait(ctl, 0, seen);
  const generation = Atomics.load(ctl, 0);
  if (generation === seen) continue;
  if (generation < 0) break;
  seen = generation;
  const fn = Atomics.load(ctl, slot + ${FUNCTION});
  let status = 0;
  if (fn >= 0) {
    try {
      functions[fn](...args.subarray(0, Atomics.load(ctl, slot + ${ARG_COUNT})));
    } catch {
      status = 1;
    }
  }
  Atomics.store(ctl, slot + ${STATUS}, status);
  Atomics.store(ctl, slot + ${DONE}, generation);
  Atomics.notify(ctl, slot + ${DONE});
}
`;

/** Export names in the module's order: the helpers index functions the same way. */
function exportNames(module: WasmModule): string[] {
  const api = (globalThis as unknown as { WebAssembly: { Module: { exports(m: WasmModule): { name: string }[] } } }).WebAssembly;
  return api.Module.exports(module).map((e) => e.name);
}

export function createWasmThreadPool(helpers = 1): WasmThreadPool {
  return {
    helpers,
    attach(module: WasmModule, imports: WasmImports): WasmParallelRunner | null {
      if (helpers < 1) return null;
      const control = new SharedArrayBuffer(ARGS_AT + helpers * MAX_ARGS * 8);
      const ctl = new Int32Array(control);
      const workers: Worker[] = [];
      const stop = (): void => {
        Atomics.store(ctl, 0, -1);
        Atomics.notify(ctl, 0);
        for (const worker of workers) void worker.terminate().catch(() => undefined);
      };
      try {
        for (let index = 0; index < helpers; index++) {
          const worker = new Worker(HELPER_SOURCE, {
            eval: true,
            execArgv: [],
            workerData: { module, imports, control, index, argsAt: ARGS_AT, maxArgs: MAX_ARGS },
          });
          worker.on('error', () => undefined); // a failed start shows as READY −1 or a timeout
          worker.unref();
          workers.push(worker);
        }
        for (let index = 0; index < helpers; index++) {
          const ready = SLOT_BASE + index * SLOT_INTS + READY;
          Atomics.wait(ctl, ready, 0, START_TIMEOUT_MS);
          if (Atomics.load(ctl, ready) !== 1) throw new Error('a helper thread did not start');
        }
      } catch {
        stop();
        return null;
      }
      const names = exportNames(module);
      const args = Array.from({ length: helpers }, (_, i) => new Float64Array(control, ARGS_AT + i * MAX_ARGS * 8, MAX_ARGS));
      let generation = 0;
      let closed = false;
      return {
        helpers,
        run(calls: readonly KernelCall[], local: () => void): void {
          if (closed) throw new Error('the thread pool runner is closed');
          if (calls.length > helpers) throw new Error(`${calls.length} calls for ${helpers} helper threads`);
          generation = (generation + 1) & 0x3fffffff;
          for (let i = 0; i < helpers; i++) {
            const slot = SLOT_BASE + i * SLOT_INTS;
            const call = calls[i];
            if (call === undefined) {
              Atomics.store(ctl, slot + FUNCTION, -1);
              continue;
            }
            const fn = names.indexOf(call.name);
            if (fn < 0 || call.args.length > MAX_ARGS) throw new Error(`cannot run ${call.name} on a helper thread`);
            args[i]!.set(call.args);
            Atomics.store(ctl, slot + ARG_COUNT, call.args.length);
            Atomics.store(ctl, slot + FUNCTION, fn);
          }
          Atomics.store(ctl, 0, generation);
          Atomics.notify(ctl, 0);
          let failure: unknown;
          try {
            local();
          } catch (error) {
            failure = error;
          }
          for (let i = 0; i < helpers; i++) {
            const done = SLOT_BASE + i * SLOT_INTS + DONE;
            for (let seen = Atomics.load(ctl, done); seen !== generation; seen = Atomics.load(ctl, done)) {
              if (Atomics.wait(ctl, done, seen, START_TIMEOUT_MS) === 'timed-out' && Atomics.load(ctl, done) === seen) {
                closed = true;
                stop();
                throw new Error('a helper thread stopped answering');
              }
            }
          }
          if (failure !== undefined) throw failure;
          for (let i = 0; i < calls.length; i++) {
            if (Atomics.load(ctl, SLOT_BASE + i * SLOT_INTS + STATUS) !== 0) throw new Error(`${calls[i]!.name} failed on a helper thread`);
          }
        },
        close(): void {
          if (closed) return;
          closed = true;
          stop();
        },
      };
    },
  };
}
