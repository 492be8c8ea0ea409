// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const nodeBuiltins = [
  'assert', 'buffer', 'child_process', 'crypto', 'events', 'fs', 'fs/promises', 'os', 'path', 'process',
  'stream', 'url', 'util', 'worker_threads', 'zlib', 'perf_hooks', 'readline', 'net', 'http', 'https',
];

// ---------------------------------------------------------------------------------------------
// Layering. DO NOT RELAX THESE RULES: the pure core in app/ is imported by the renderer, the
// worker and the CLI alike. A Node, Electron, React or DOM dependency in app/ breaks one of them.
// Node-only adapters (fs, onnxruntime-node) go in app/node/, which the rest of app/ may not import.
// ---------------------------------------------------------------------------------------------
const uiPackages = ['electron', 'electron/*', 'react', 'react/*', 'react-dom', 'react-dom/*', 'zustand', 'zustand/*', 'echarts', 'echarts/*'];
const nodePackages = [...nodeBuiltins, ...nodeBuiltins.map((m) => `node:${m}`), 'node:*', 'onnxruntime-node'];

export default tseslint.config(
  // app/wasm/kernels/*.ts is AssemblyScript (checked by its compiler, asc); app/wasm/built/ is generated from it.
  { ignores: ['node_modules/', 'out/', 'release/', 'coverage/', 'test-results/', 'playwright-report/', 'app/wasm/kernels/**/*.ts', 'app/wasm/built/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    files: ['app/**/*.ts'],
    ignores: ['app/node/**', 'app/**/*.test.ts', 'app/**/test-support/**'],
    languageOptions: { globals: {} },
    rules: {
      'no-restricted-imports': ['error', {
        paths: [],
        patterns: [
          { group: uiPackages, message: 'app/ is the pure core: no Electron, React or UI libraries (see STYLE.md §1).' },
          { group: nodePackages, message: 'app/ is browser-safe: Node-only code belongs in app/node/.' },
          { group: ['**/node/*', '**/node'], message: 'Browser-safe app/ code may not import app/node/.' },
        ],
      }],
      'no-restricted-globals': ['error', 'window', 'document', 'navigator', 'process', 'Buffer', 'require', '__dirname'],
    },
  },
  {
    files: ['app/node/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ group: uiPackages, message: 'app/node/ is headless: no Electron or UI libraries.' }],
      }],
    },
  },
  {
    // The renderer is browser code: it reaches the engine only through renderer/api (WorkbenchApi).
    files: ['renderer/**/*.{ts,tsx}'],
    ignores: ['renderer/**/*.test.{ts,tsx}', 'renderer/**/test-support/**', 'renderer/vite.config.ts'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: nodePackages, message: 'renderer/ is browser code: ask the host through getWorkbenchApi() (renderer/api).' },
          { group: ['electron', 'electron/*'], message: 'renderer/ never imports Electron: the preload exposes window.kvscope (STYLE.md §3).' },
          { group: ['**/app/node/*', '**/app/node/**'], message: 'renderer/ may import only the browser-safe parts of app/.' },
          { group: ['**/main/*', '**/main/**'], message: 'renderer/ may not import the hosts (main/).' },
        ],
      }],
      'no-restricted-globals': ['error', 'process', 'Buffer', 'require', '__dirname'],
    },
  },
  {
    // The preload is sandboxed: it can require only `electron` (and a few polyfills), not Node's
    // modules, and it is bundled into one file. It talks to main through its two IPC channels only.
    files: ['main/preload/**/*.ts'],
    ignores: ['main/preload/**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: nodePackages, message: 'A sandboxed preload cannot load Node modules.' },
          { group: ['**/app/node/*', '**/app/node/**', '**/main/electron/**', '**/main/serve/**'], message: 'The preload is bundled alone; keep it to app/protocol and main/preload.' },
        ],
      }],
      'no-restricted-globals': ['error', 'process', 'Buffer', 'require', '__dirname'],
    },
  },
);
