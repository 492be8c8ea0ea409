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
  { ignores: ['node_modules/', 'out/', 'release/', 'coverage/', 'test-results/', 'playwright-report/'] },
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
);
