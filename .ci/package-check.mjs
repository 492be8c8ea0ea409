// Packaging works offline when an Electron distribution is supplied (electron-builder's
// `electronDist`): packs the built app (`npm run build` first) with `--linux dir` into a temporary
// folder and checks what the installer would carry. No Electron runtime exists on these machines, so
// the supplied distribution is a placeholder `electron` that only says so: this checks the packaging
// (asar whitelist, unpacked native addon, dependency pruning, the fuses electron-builder flips in
// the binary), never a launch. The placeholder carries a fuse wire as Electron's binary does (the
// sentinel, version 1, then one byte per fuse with Electron's defaults), so @electron/fuses flips
// it during packaging and reads it back here exactly as it would on a real Electron.
// Prints one line per check and "package check: N passed, N failed"; exits 1 on a failure.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import asar from '@electron/asar';
import fuses from '@electron/fuses';
import fuseConstants from '@electron/fuses/dist/constants.js';

const { FuseV1Options, getCurrentFuseWire } = fuses;
const { FuseState, SENTINEL } = fuseConstants;

// Electron's own defaults, in FuseV1Options order: RunAsNode on, cookie encryption off, NODE_OPTIONS
// on, --inspect on, asar integrity off, only-asar off, browser V8 snapshot off, file:// privileges on.
const ELECTRON_DEFAULT_WIRE = '10110001';
/** What electron-builder.yml's `electronFuses` must leave in the packaged binary. */
const EXPECTED_FUSES = {
  RunAsNode: FuseState.DISABLE,
  EnableCookieEncryption: FuseState.ENABLE,
  EnableNodeOptionsEnvironmentVariable: FuseState.DISABLE,
  EnableNodeCliInspectArguments: FuseState.DISABLE,
  EnableEmbeddedAsarIntegrityValidation: FuseState.ENABLE,
  OnlyLoadAppFromAsar: FuseState.ENABLE,
  GrantFileProtocolExtraPrivileges: FuseState.DISABLE,
};

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
  writeFileSync(join(dist, 'electron'), Buffer.concat([
    Buffer.from('#!/bin/sh\necho "placeholder Electron distribution for .ci/package-check.mjs: no runtime" >&2\nexit 1\n# fuse wire: '),
    Buffer.from(SENTINEL, 'latin1'), Buffer.from([1, ELECTRON_DEFAULT_WIRE.length]), Buffer.from(ELECTRON_DEFAULT_WIRE, 'latin1'), Buffer.from('\n'),
  ]));
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
  const binary = join(output, 'linux-unpacked', 'kvscope');
  if (existsSync(binary)) {
    const wire = await getCurrentFuseWire(binary);
    for (const [name, expected] of Object.entries(EXPECTED_FUSES)) {
      const actual = wire[FuseV1Options[name]];
      check(`fuse ${name} is ${expected === FuseState.ENABLE ? 'on' : 'off'} in the packaged binary`, actual === expected, `found ${actual === undefined ? 'nothing' : String.fromCharCode(actual)}`);
    }
  } else {
    check('the packaged binary exists', false, binary);
  }
  const napi = join(resources, 'app.asar.unpacked', 'node_modules', 'onnxruntime-node', 'bin', 'napi-v6');
  check('onnxruntime-node\'s addon is unpacked from the asar', existsSync(join(napi, 'linux', 'x64', 'onnxruntime_binding.node')));
  check('only the Linux binaries of onnxruntime-node ship', existsSync(napi) && readdirSync(napi).join() === 'linux', existsSync(napi) ? readdirSync(napi).join(', ') : 'missing');
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(`package check: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
