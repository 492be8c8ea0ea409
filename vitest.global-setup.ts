import { execFileSync } from 'node:child_process';

/** Builds the WebAssembly kernels (app/wasm/kernels/build.mjs; a no-op when they are up to date) before any test imports them. */
export default function setup(): void {
  execFileSync(process.execPath, ['app/wasm/kernels/build.mjs'], { stdio: 'inherit' });
}
