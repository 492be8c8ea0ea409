import { Worker } from 'node:worker_threads';
import type { WasmImports, WasmModule } from '../wasm/wasm-runtime.js';
import type { KernelCall, WasmParallelRunner, WasmThreadPool } from '../wasm/wasm-threads.js';

/**
 * app/wasm/wasm-threads.ts's thread pool on Node worker_threads. Each `attach` starts its own helper
 * threads, which instantiate the module with the (shared) imports and then wait on a shared control
 * block. `run` writes each helper's call there, wakes the helpers with Atomics.notify, runs its own
 * part, and returns once every call is done. Synchronous, so a caller like the quantizer keeps its
 * synchronous API; a round trip costs tens of microseconds.
 *
 * A call belongs to whoever claims it first for the current generation (compare-and-exchange): its
 * helper, or the calling thread once its own part is done. So a helper the OS has not scheduled (a
 * busy machine) never stalls the caller: the caller runs that call on its own instance of the module.
 * Calls do the same work wherever they run, so results never depend on who ran what.
 *
 * Helpers are unref'd (they never keep the process alive) and stop with `close()`.
 */
const MAX_ARGS = 32;
/** Control block (Int32Array): [0] generation (−1 = stop), then 8 int32 per helper from SLOT_BASE. */
const SLOT_BASE = 16;
const SLOT_INTS = 8;
/** the last generation whose call the helper finished */
const DONE = 0;
/** export index of the call, −1 for none */
const FUNCTION = 1;
const ARG_COUNT = 2;
/** 0 when the helper's call succeeded */
const STATUS = 3;
/** 1 once the helper has instantiated the module, −1 if it could not */
const READY = 4;
/** the last generation whose call someone claimed (the helper or the caller) */
const CLAIM = 5;
const ARGS_AT = 1024;
const START_TIMEOUT_MS = 20_000;
/** A claimed call that takes longer means a lost helper (a step of the largest tensor takes about a second). */
const CALL_TIMEOUT_MS = 120_000;

/** Generations wrap from WRAP back to 1 (never 0, the helpers' start). */
const WRAP = 0x3fffffff;

/** Whether generation `a` comes after `b`, across the wrap (the two are never half a cycle apart). */
export function isNewerGeneration(a: number, b: number): boolean {
  const ahead = (a - b + WRAP) % WRAP;
  return ahead > 0 && ahead < WRAP / 2;
}

/**
 * Claims slot `slot`'s call of `generation`: true for the one thread that gets it. Claims only move
 * forward: a helper that read generation g and then slept through it (the caller ran g itself and went
 * on to g+1, perhaps claiming that too) must not claim g over g+1, or it would run g+1's call beside
 * the caller and write into the next step's buffers after the caller has moved on.
 */
export function claim(ctl: Int32Array, slot: number, generation: number): boolean {
  for (;;) {
    const previous = Atomics.load(ctl, slot + CLAIM);
    if (!isNewerGeneration(generation, previous)) return false;
    if (Atomics.compareExchange(ctl, slot + CLAIM, previous, generation) === previous) return true;
  }
}

/** The helper thread (CommonJS, evaluated): kept free of imports so it needs no loader. */
const HELPER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { module, imports, control, index, argsAt, maxArgs } = workerData;
const ctl = new Int32Array(control);
const slot = ${SLOT_BASE} + index * ${SLOT_INTS};
const args = new Float64Array(control, argsAt + index * maxArgs * 8, maxArgs);
const isNewer = (a, b) => { // as isNewerGeneration() in wasm-thread-pool.ts
  const ahead = (a - b + ${WRAP}) % ${WRAP};
  return ahead > 0 && ahead < ${WRAP / 2};
};
const claim = (generation) => { // as claim() in wasm-thread-pool.ts
  for (;;) {
    const previous = Atomics.load(ctl, slot + ${CLAIM});
    if (!isNewer(generation, previous)) return false;
    if (Atomics.compareExchange(ctl, slot + ${CLAIM}, previous, generation) === previous) return true;
  }
};
let functions = [];
try {
  const exports = new WebAssembly.Instance(module, imports).exports;
  functions = WebAssembly.Module.exports(module).map((e) => exports[e.name]);
  Atomics.store(ctl, slot + ${READY}, 1);
} catch {
  Atomics.store(ctl, slot + ${READY}, -1);
}
Atomics.notify(ctl, slot + ${READY});
let seen = 0; // the generation before the first run (a run may already have started)
while (Atomics.load(ctl, slot + ${READY}) === 1) {
  Atomics.wait(ctl, 0, seen);
  const generation = Atomics.load(ctl, 0);
  if (generation === seen) continue;
  if (generation < 0) break;
  seen = generation;
  const fn = Atomics.load(ctl, slot + ${FUNCTION});
  if (fn < 0 || !claim(generation)) continue; // no call, or the caller took it
  let status = 0;
  try {
    functions[fn](...args.subarray(0, Atomics.load(ctl, slot + ${ARG_COUNT})));
  } catch {
    status = 1;
  }
  Atomics.store(ctl, slot + ${STATUS}, status);
  Atomics.store(ctl, slot + ${DONE}, generation);
  Atomics.notify(ctl, slot + ${DONE});
}
`;

interface WebAssemblyStatics {
  Module: { exports(m: WasmModule): { name: string }[] };
  Instance: new (module: WasmModule, imports: WasmImports) => { readonly exports: Record<string, unknown> };
}

export function createWasmThreadPool(helpers = 1): WasmThreadPool {
  return {
    helpers,
    attach(module: WasmModule, imports: WasmImports): WasmParallelRunner | null {
      if (helpers < 1) return null;
      const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyStatics }).WebAssembly;
      const control = new SharedArrayBuffer(ARGS_AT + helpers * MAX_ARGS * 8);
      const ctl = new Int32Array(control);
      const workers: Worker[] = [];
      const stop = (): void => {
        Atomics.store(ctl, 0, -1);
        Atomics.notify(ctl, 0);
        for (const worker of workers) void worker.terminate().catch(() => undefined);
      };
      let local: Record<string, unknown>;
      try {
        local = new wasm.Instance(module, imports).exports; // runs the calls the caller claims
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
      const names = wasm.Module.exports(module).map((e) => e.name);
      const args = Array.from({ length: helpers }, (_, i) => new Float64Array(control, ARGS_AT + i * MAX_ARGS * 8, MAX_ARGS));
      let generation = 0;
      let closed = false;
      return {
        helpers,
        run(calls: readonly KernelCall[], work: () => void): void {
          if (closed) throw new Error('the thread pool runner is closed');
          if (calls.length > helpers) throw new Error(`${calls.length} calls for ${helpers} helper threads`);
          generation = generation === WRAP ? 1 : generation + 1; // never back to 0, the helpers' start
          for (let i = 0; i < helpers; i++) {
            const slot = SLOT_BASE + i * SLOT_INTS;
            const call = calls[i];
            const fn = call === undefined ? -1 : names.indexOf(call.name);
            if (call !== undefined && (fn < 0 || call.args.length > MAX_ARGS || typeof local[call.name] !== 'function')) {
              throw new Error(`cannot run ${call.name} on a helper thread`);
            }
            if (call !== undefined) args[i]!.set(call.args);
            Atomics.store(ctl, slot + ARG_COUNT, call?.args.length ?? 0);
            Atomics.store(ctl, slot + FUNCTION, fn);
          }
          Atomics.store(ctl, 0, generation);
          Atomics.notify(ctl, 0);
          let failure: unknown;
          try {
            work();
          } catch (error) {
            failure = error;
          }
          // every call is now claimed by its helper or here; calls no helper has started run here
          const here = calls.map((_, i) => claim(ctl, SLOT_BASE + i * SLOT_INTS, generation));
          for (let i = 0; i < calls.length && failure === undefined; i++) {
            if (!here[i]) continue;
            try {
              (local[calls[i]!.name] as (...a: number[]) => void)(...calls[i]!.args);
            } catch (error) {
              failure = error;
            }
          }
          for (let i = 0; i < calls.length; i++) {
            if (here[i]) continue;
            const slot = SLOT_BASE + i * SLOT_INTS;
            for (let done = Atomics.load(ctl, slot + DONE); done !== generation; done = Atomics.load(ctl, slot + DONE)) {
              if (Atomics.wait(ctl, slot + DONE, done, CALL_TIMEOUT_MS) === 'timed-out' && Atomics.load(ctl, slot + DONE) === done) {
                closed = true;
                stop();
                throw new Error('a helper thread stopped answering');
              }
            }
            if (failure === undefined && Atomics.load(ctl, slot + STATUS) !== 0) failure = new Error(`${calls[i]!.name} failed on a helper thread`);
          }
          if (failure !== undefined) throw failure;
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
