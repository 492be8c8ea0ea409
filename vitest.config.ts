import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['app/**/*.test.ts', 'main/**/*.test.ts', 'workers/**/*.test.ts', 'bench/**/*.test.ts', 'renderer/**/*.test.{ts,tsx}'],
    // Forks, not threads: onnxruntime-node's WebGPU EP must not be initialised from two threads at once.
    pool: 'forks',
    testTimeout: 30_000,
  },
});
