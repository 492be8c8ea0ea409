import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['app/**/*.test.ts', 'main/**/*.test.ts', 'workers/**/*.test.ts', 'bench/**/*.test.ts', 'renderer/**/*.test.{ts,tsx}'],
    // Forks, not threads: onnxruntime-node's WebGPU EP must not be initialised from two threads at once.
    pool: 'forks',
    // builds the WebAssembly kernels from app/wasm/kernels/ when missing or stale, so `npx vitest run FILE` works on a fresh checkout
    globalSetup: ['./vitest.global-setup.ts'],
    testTimeout: 30_000,
  },
});
