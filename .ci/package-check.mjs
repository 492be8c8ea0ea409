// Packaging works offline when an Electron distribution is supplied (electron-builder's
// `electronDist`): packs the built app (`npm run build` first) with `--linux dir` into a temporary
// folder and checks what the installer would carry. No Electron runtime exists on these machines, so
// the supplied distribution is a placeholder `electron` that only says so: this checks the packaging
// (asar whitelist, unpacked native addon, dependency pruning), never a launch.
// Prints one line per check and "package check: N passed, N failed"; exits 1 on a failure.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import asar from '@electron/asar';

const work = mkdtempSync(join(tmpdir(), 'kvscope-package-'));
const dist = join(work, 'electron-dist');
const output = join(work, 'release');
let passed = 0;
let failed = 0;
const check = (name, ok, detail = '') => {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok || detail === '' ? '' : `: ${detail}`}`);
};

try {
  mkdirSync(dist, { recursive: true });
  writeFileSync(join(dist, 'electron'), '#!/bin/sh\necho "placeholder Electron distribution for .ci/package-check.mjs: no runtime" >&2\nexit 1\n');
  chmodSync(join(dist, 'electron'), 0o755);
  const started = Date.now();
  const run = spawnSync('npx', ['electron-builder', '--linux', 'dir', `-c.electronDist=${dist}`, `-c.directories.output=${output}`],
    { encoding: 'utf8', env: { ...process.env, ELECTRON_BUILDER_OFFLINE: '1' } });
  check(`electron-builder --linux dir with a supplied electronDist (${((Date.now() - started) / 1e3).toFixed(1)} s)`, run.status === 0,
    `exit ${run.status}\n${(run.stdout + run.stderr).slice(-2000)}`);
  const resources = join(output, 'linux-unpacked', 'resources');
  const archive = join(resources, 'app.asar');
  if (existsSync(archive)) {
    const files = new Set(asar.listPackage(archive, { isPack: false }).map((f) => f.replaceAll('\\', '/')));
    for (const entry of ['/out/main/index.js', '/out/preload/index.cjs', '/out/renderer/index.html', '/out/node/workers/generation-worker.js', '/package.json']) {
      check(`app.asar holds ${entry}`, files.has(entry));
    }
    const ours = [...files].filter((f) => f !== '/node_modules' && !f.startsWith('/node_modules/'));
    const leaked = ours.filter((f) => /\.(test|spec)\.js$|\.map$|\.tsx?$/.test(f) || !/^\/(out(\/|$)|package\.json$)/.test(f));
    check('app.asar holds only out/ and package.json of ours (no sources, tests or maps)', leaked.length === 0, leaked.slice(0, 5).join(', '));
    const bundled = ['react', 'react-dom', 'echarts', 'zustand'].filter((name) => files.has(`/node_modules/${name}`));
    check('the renderer\'s libraries are bundled, not shipped as node_modules', bundled.length === 0, bundled.join(', '));
  } else {
    check('app.asar exists', false, archive);
  }
  const napi = join(resources, 'app.asar.unpacked', 'node_modules', 'onnxruntime-node', 'bin', 'napi-v6');
  check('onnxruntime-node\'s addon is unpacked from the asar', existsSync(join(napi, 'linux', 'x64', 'onnxruntime_binding.node')));
  check('only the Linux binaries of onnxruntime-node ship', existsSync(napi) && readdirSync(napi).join() === 'linux', existsSync(napi) ? readdirSync(napi).join(', ') : 'missing');
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(`package check: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
