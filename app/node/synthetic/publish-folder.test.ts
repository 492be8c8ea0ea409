import { mkdtemp, readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publishFolder } from './publish-folder.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'kvscope-publish-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A folder is valid when its two files agree: a torn write would leave them different. */
async function isValid(dir: string): Promise<boolean> {
  try {
    return (await readFile(join(dir, 'a.txt'), 'utf8')) === (await readFile(join(dir, 'b.txt'), 'utf8'));
  } catch {
    return false;
  }
}

function writer(tag: string): (dir: string) => Promise<void> {
  return async (dir) => {
    await writeFile(join(dir, 'a.txt'), tag);
    await new Promise((resolve) => setTimeout(resolve, 5)); // let the racers interleave
    await writeFile(join(dir, 'b.txt'), tag);
  };
}

describe('publishFolder', () => {
  it('lets one of many concurrent writers win and leaves a complete folder, no temporaries', async () => {
    const target = join(root, 'model-v1');
    await Promise.all(Array.from({ length: 8 }, (_, i) => publishFolder(target, writer(`writer ${i}`), isValid)));
    expect(await isValid(target)).toBe(true);
    expect(await readdir(root)).toEqual(['model-v1']);
  });

  it('replaces an invalid folder but keeps a valid one', async () => {
    const target = join(root, 'model-v1');
    await mkdir(target);
    await writeFile(join(target, 'a.txt'), 'half-written');
    await publishFolder(target, writer('fresh'), isValid);
    expect(await readFile(join(target, 'b.txt'), 'utf8')).toBe('fresh');

    await publishFolder(target, writer('newer'), isValid);
    expect(await readFile(join(target, 'a.txt'), 'utf8')).toBe('fresh');
    expect(await readdir(root)).toEqual(['model-v1']);
  });

  it('cleans up its temporary folder when writing fails', async () => {
    const target = join(root, 'model-v1');
    await expect(publishFolder(target, async () => {
      throw new Error('disk full');
    }, isValid)).rejects.toThrow('disk full');
    expect(await readdir(root)).toEqual([]);
  });
});
