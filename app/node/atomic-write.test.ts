import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ATOMIC_TEMP_PATTERN, writeFileAtomic } from './atomic-write.js';
import { FileAccessError, StorageWriteError } from './fs-errors.js';

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'kvscope-atomic-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('writeFileAtomic', () => {
  it('writes the whole file, replaces an old one and leaves no temp file', () => {
    const path = join(dir, 'x.json');
    writeFileAtomic(path, new TextEncoder().encode('old'));
    const big = new Uint8Array(3 * 1024 * 1024).fill(65);
    writeFileAtomic(path, big);
    expect(readFileSync(path).equals(Buffer.from(big))).toBe(true);
    expect(readdirSync(dir)).toEqual(['x.json']);
  });

  it('fails with a StorageWriteError (a FileAccessError: run code storage-failed) naming the path when the folder is missing, and leaves nothing', () => {
    const path = join(dir, 'missing', 'x.json');
    let thrown: unknown;
    try {
      writeFileAtomic(path, new Uint8Array(1));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(StorageWriteError);
    expect(thrown).toBeInstanceOf(FileAccessError);
    expect(thrown).toMatchObject({ name: 'StorageWriteError', errno: 'ENOENT', message: `Cannot write ${path}: its folder does not exist. Create it first.` });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('names its temp files so that folder readers can skip them', () => {
    expect(ATOMIC_TEMP_PATTERN.test(`.run.json.${process.pid}.0a1b2c3d.tmp`)).toBe(true);
    expect(ATOMIC_TEMP_PATTERN.test('run.json')).toBe(false);
  });
});
