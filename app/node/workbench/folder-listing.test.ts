import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FOLDER_PAGE_ENTRIES, listFolder } from './folder-listing.js';

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

  it('lists a folder of 10,000 empty graphs a page at a time, in natural order, every entry once (issue 24)', () => {
    const huge = join(root, 'huge');
    mkdirSync(join(huge, 'sub'), { recursive: true });
    for (let i = 1; i <= 10_000; i++) writeFileSync(join(huge, `model_${i}.onnx`), '');
    writeFileSync(join(huge, 'config.json'), '{}');
    writeFileSync(join(huge, 'notes.txt'), '');
    symlinkSync('loop', join(huge, 'loop'));
    const first = listFolder(huge, [], root);
    expect(first).toMatchObject({ isModel: true, offset: 0, total: 10_002, truncated: true });
    expect(first.entries).toHaveLength(FOLDER_PAGE_ENTRIES);
    // sub-folders, then config.json, then the graphs in natural order, across the whole folder (not the first 2,000 read)
    expect(first.entries.slice(0, 4).map((entry) => [entry.name, entry.kind])).toEqual([['sub', 'folder'], ['config.json', 'config'], ['model_1.onnx', 'onnx'], ['model_2.onnx', 'onnx']]);
    const names = [...first.entries.map((entry) => entry.name)];
    let page = first;
    while (page.truncated) {
      page = listFolder(huge, [], root, page.offset + page.entries.length);
      names.push(...page.entries.map((entry) => entry.name));
    }
    expect(page).toMatchObject({ offset: 10_000, total: 10_002, truncated: false });
    expect(names).toHaveLength(10_002);
    expect(new Set(names).size).toBe(10_002);
    expect(names.at(-1)).toBe('model_10000.onnx');
    // past the end: an empty last page, not an error
    expect(listFolder(huge, [], root, 50_000)).toMatchObject({ entries: [], offset: 10_002, truncated: false });
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
