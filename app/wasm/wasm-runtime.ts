/**
 * The part of the WebAssembly JavaScript API that kvscope's kernels use, typed locally: the pure core
 * compiles without DOM or Node typings (tsconfig.app.json), and a runtime without WebAssembly falls
 * back to JavaScript.
 */
export const WASM_PAGE_BYTES = 65536;

export interface WasmMemory {
  readonly buffer: ArrayBuffer | SharedArrayBuffer;
  grow(pages: number): number;
}

/** A compiled module (opaque here). */
export type WasmModule = object;

export type WasmImports = Record<string, Record<string, unknown>>;

export interface WasmInstance {
  readonly exports: Record<string, unknown>;
}

export interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports?: WasmImports) => WasmInstance;
  Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
}

/** The runtime's WebAssembly object, or undefined where there is none. */
export function wasmApi(): WasmApi | undefined {
  return (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
}
