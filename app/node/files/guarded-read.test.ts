import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileAccessError } from '../fs-errors.js';
import { FILE_RULES } from './file-kinds.js';
import { GuardedFileError } from './file-read-error.js';
import { checkReadableFile, readGuardedFile, readGuardedFileSync, readGuardedHeadSync, readGuardedText, readGuardedTextSync } from './guarded-read.js';

const root = mkdtempSync(join(tmpdir(), 'kvscope-guarded-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function fifo(name: string): string | null {
  const path = join(root, name);
  return spawnSync('mkfifo', [path]).status === 0 ? path : null;
}

/** Refusals are checked for speed too: the failure this guards against is a read that never ends. */
async function refusedQuickly(read: () => unknown): Promise<GuardedFileError> {
  const started = performance.now();
  let caught: unknown;
  try {
    await read();
  } catch (error) {
    caught = error;
  }
  expect(performance.now() - started).toBeLessThan(1000);
  expect(caught).toBeInstanceOf(GuardedFileError);
  return caught as GuardedFileError;
}

describe('the guarded reader (issue 9, failure 3)', () => {
  it('reads a regular file, sync and async, through a link for model files', async () => {
    const path = join(root, 'config.json');
    writeFileSync(path, '{"a": 1}');
    symlinkSync(path, join(root, 'linked.json'));
    expect(readGuardedTextSync(path, 'config')).toBe('{"a": 1}');
    expect(await readGuardedText(join(root, 'linked.json'), 'config')).toBe('{"a": 1}');
    const large = Buffer.alloc(200_000, 7);
    writeFileSync(join(root, 'large.npy'), large);
    expect((await readGuardedFile(join(root, 'large.npy'), 'npy')).equals(large)).toBe(true);
    expect(readGuardedFileSync(join(root, 'large.npy'), 'npy').equals(large)).toBe(true);
    expect(readGuardedHeadSync(join(root, 'large.npy'), 'onnx', 64)).toHaveLength(64);
    expect(readGuardedHeadSync(path, 'onnx', 64).toString()).toBe('{"a": 1}');
  });

  it('refuses a FIFO at once instead of waiting for a writer forever', async () => {
    const path = fifo('config-fifo.json');
    if (path === null) return; // no mkfifo on this system
    for (const read of [() => readGuardedFileSync(path, 'config'), () => readGuardedFile(path, 'config'), () => checkReadableFile(path, 'onnx')]) {
      const error = await refusedQuickly(read);
      expect(error.refusal).toBe('not-regular');
      expect(error.message).toMatch(/config-fifo\.json is a FIFO \(named pipe\), not a regular file: kvscope reads (a model config \(config\.json\)|an ONNX graph \(\.onnx\)) only from a regular file\./);
    }
  });

  it('refuses a link to /dev/zero, which never ends (std::bad_alloc before)', async () => {
    const path = join(root, 'zero.json');
    symlinkSync('/dev/zero', path);
    const error = await refusedQuickly(() => readGuardedFile(path, 'tokenizer'));
    expect(error.message).toMatch(/zero\.json is a character device, not a regular file/);
    await refusedQuickly(() => readGuardedFileSync(path, 'npy'));
  });

  it('refuses a folder and says where to point instead', async () => {
    const path = join(root, 'a-folder.json');
    mkdirSync(path);
    const error = await refusedQuickly(() => readGuardedFile(path, 'config'));
    expect(error.message).toMatch(/a-folder\.json is a folder, not a regular file/);
    expect(error.fix).toMatch(/Point kvscope at the file inside the folder/);
  });

  it('refuses a file past its kind\'s cap from its size, before reading it', async () => {
    const path = join(root, 'recent.json');
    writeFileSync(path, Buffer.alloc(FILE_RULES['recent-models'].maxBytes! + 1, 0x20));
    const error = await refusedQuickly(() => readGuardedFile(path, 'recent-models'));
    expect(error.refusal).toBe('too-large');
    expect(error.message).toContain('is too large for the recent-models list (recent.json): 1.00 MiB, more than the 1.00 MiB kvscope reads.');
    expect(error.fix).toContain('Delete recent.json');
    expect(readGuardedFileSync(path, 'config')).toHaveLength(FILE_RULES['recent-models'].maxBytes! + 1);
  });

  it('refuses links in kvscope\'s own folders (a foreign file\'s content must not be read)', async () => {
    const secret = join(root, 'secret.txt');
    writeFileSync(secret, 'root:x:0:0:SECRET');
    const link = join(root, '20250101-000000-abcdef.json');
    symlinkSync(secret, link);
    const error = await refusedQuickly(() => readGuardedFile(link, 'run-record'));
    expect(error.refusal).toBe('link');
    expect(error.message).not.toContain('SECRET');
    await refusedQuickly(() => readGuardedFileSync(link, 'run-record'));
  });

  it('names a missing file plainly', async () => {
    await expect(readGuardedFile(join(root, 'nope.json'), 'config')).rejects.toThrow(FileAccessError);
    await expect(readGuardedFile(join(root, 'nope.json'), 'config')).rejects.toThrow(/nope\.json does not exist/);
    expect(() => readGuardedFileSync(join(root, 'nope.json'), 'config')).toThrow(/nope\.json does not exist/);
  });
});
