import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

/**
 * Stand-alone browser build of the renderer (the Electron build is electron.vite.config.ts, whose
 * renderer root is this folder too). `--mode fake` compiles in the deterministic test API
 * (renderer/test-support) for e2e runs without an engine; every other mode leaves it out.
 */
export default defineConfig(({ mode }) => ({
  root: import.meta.dirname,
  base: './',
  plugins: [react()],
  build: {
    outDir: mode === 'fake' ? '../out/renderer-fake' : '../out/renderer-web',
    emptyOutDir: true,
    chunkSizeWarningLimit: 900,
  },
}));
