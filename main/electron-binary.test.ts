import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findElectronBinary } from './electron-binary.js';
import { browserCommand } from './open-browser.js';

describe('findElectronBinary', () => {
  const root = mkdtempSync(join(tmpdir(), 'kvscope-electron-bin-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const packageDir = join(root, 'node_modules', 'electron');

  it('reports why there is none, and finds one once it exists', () => {
    expect(findElectronBinary(root, {})).toEqual({ path: null, reason: 'the electron package is not installed' });
    mkdirSync(packageDir, { recursive: true });
    writeFileSync(join(packageDir, 'package.json'), '{}');
    expect(findElectronBinary(root, {})).toMatchObject({ path: null, reason: expect.stringMatching(/no downloaded binary/) });
    writeFileSync(join(packageDir, 'path.txt'), 'electron');
    expect(findElectronBinary(root, {})).toMatchObject({ path: null, reason: expect.stringMatching(/is missing/) });
    mkdirSync(join(packageDir, 'dist'));
    writeFileSync(join(packageDir, 'dist', 'electron'), '#!/bin/sh\n');
    chmodSync(join(packageDir, 'dist', 'electron'), 0o755);
    expect(findElectronBinary(root, {})).toEqual({ path: join(packageDir, 'dist', 'electron') });
  });

  it('honours ELECTRON_OVERRIDE_DIST_PATH and ELECTRON_EXEC_PATH', () => {
    const dist = join(root, 'custom-dist');
    mkdirSync(dist);
    expect(findElectronBinary(root, { ELECTRON_OVERRIDE_DIST_PATH: dist })).toMatchObject({ path: null, reason: expect.stringMatching(/OVERRIDE/) });
    writeFileSync(join(dist, 'electron'), '');
    expect(findElectronBinary(root, { ELECTRON_OVERRIDE_DIST_PATH: dist })).toEqual({ path: join(dist, 'electron') });
    expect(findElectronBinary(root, { ELECTRON_EXEC_PATH: join(dist, 'electron') })).toEqual({ path: join(dist, 'electron') });
  });
});

describe('browserCommand', () => {
  it('opens a browser only where there is a desktop', () => {
    expect(browserCommand('http://x/', {}, 'linux')).toBeNull();
    expect(browserCommand('http://x/', { DISPLAY: ':0' }, 'linux')).toEqual(['xdg-open', 'http://x/']);
    expect(browserCommand('http://x/', {}, 'darwin')).toEqual(['open', 'http://x/']);
  });
});
