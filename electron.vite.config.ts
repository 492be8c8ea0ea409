import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';

/**
 * The desktop build (`npm run build:electron`, part of `npm run build`): three bundles under out/.
 * - main: main/electron/index.ts → out/main/index.js (ESM; node_modules such as onnxruntime-node
 *   stay external). The generation worker is not bundled: it is the tsc build in out/node (see
 *   main/electron/workbench-app.ts), so build:node must run too.
 * - preload: main/preload/index.ts → out/preload/index.cjs. Sandboxed preloads cannot load ES
 *   modules or other files, so it is one CommonJS file with everything but `electron` inlined.
 * - renderer: renderer/index.html → out/renderer, which `kvscope serve` serves too.
 */
export default defineConfig({
  main: {
    build: {
      lib: { entry: resolve(import.meta.dirname, 'main/electron/index.ts'), formats: ['es'] },
      outDir: resolve(import.meta.dirname, 'out/main'),
    },
  },
  preload: {
    build: {
      lib: { entry: resolve(import.meta.dirname, 'main/preload/index.ts'), formats: ['cjs'] },
      outDir: resolve(import.meta.dirname, 'out/preload'),
      externalizeDeps: false,
      rolldownOptions: { output: { entryFileNames: 'index.cjs', codeSplitting: false } },
    },
  },
  renderer: {
    root: resolve(import.meta.dirname, 'renderer'),
    base: './',
    plugins: [react()],
    build: {
      outDir: resolve(import.meta.dirname, 'out/renderer'),
      emptyOutDir: true,
      chunkSizeWarningLimit: 900,
      rolldownOptions: { input: resolve(import.meta.dirname, 'renderer/index.html') },
    },
  },
});
