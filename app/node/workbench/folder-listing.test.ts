import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listFolder } from './folder-listing.js';

describe('listFolder', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'kvscope-folders-'));
    mkdirSync(join(root, 'models', 'tiny', 'onnx'), { recursive: true });
    writeFileSync(join(root, 'models', 'tiny', 'config.json'), '{}');
    writeFileSync(join(root, 'models', 'tiny', 'onnx', 'model.onnx'), '');
    mkdirSync(join(root, 'models', 'notes'));
    mkdirSync(join(root, 'models', '.git'));
    writeFileSync(join(root, 'models', 'readme.txt'), '');
    mkdirSync(join(root, 'locked'));
  });
  afterAll(() => {
    chmodSync(join(root, 'locked'), 0o755);
    rmSync(root, { recursive: true, force: true });
  });

  it('lists sub-folders (model folders marked) and model files, hidden entries left out', () => {
    const listing = listFolder(join(root, 'models'), [{ kind: 'folder', path: join(root, 'models', 'tiny') }, { kind: 'synthetic' }], root);
    expect(listing.entries.map((entry) => [entry.name, entry.kind])).toEqual([['notes', 'folder'], ['tiny', 'model']]);
    expect(listing).toMatchObject({ path: join(root, 'models'), parent: root, isModel: false, truncated: false });
    expect(listing.places.map((place) => place.label)).toEqual(['Home', 'tiny', 'File system root']);
    const model = listFolder(join(root, 'models', 'tiny'), [], root);
    expect(model.isModel).toBe(true);
    expect(model.entries.map((entry) => [entry.name, entry.kind])).toEqual([['onnx', 'folder'], ['config.json', 'config']]);
    expect(listFolder(join(root, 'models', 'tiny', 'onnx'), [], root).entries).toEqual([{ name: 'model.onnx', path: join(root, 'models', 'tiny', 'onnx', 'model.onnx'), kind: 'onnx' }]);
  });

  it('starts at home, and says what the host refuses', () => {
    expect(listFolder(null, [], root).path).toBe(root);
    expect(() => listFolder(join(root, 'nope'), [], root)).toThrow(/does not exist on the host/);
    expect(() => listFolder(join(root, 'models', 'readme.txt'), [], root)).toThrow(/is a file, not a folder/);
    chmodSync(join(root, 'locked'), 0o000);
    // root reads everything: the refusal can only be seen as an ordinary user
    if (process.getuid?.() !== 0) expect(() => listFolder(join(root, 'locked'), [], root)).toThrow(/refuses to list .*permission denied/);
  });
});
