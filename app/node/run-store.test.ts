import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleResult } from '../protocol/test-support/sample-messages.js';
import { RunRecordError } from '../record/parse-run-record.js';
import { createRunRecord, serializeRunRecord, type RunRecord } from '../record/run-record.js';
import { FileAccessError } from './fs-errors.js';
import { RunStore } from './run-store.js';

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'kvscope-runs-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function record(id: string, minute = 0): RunRecord {
  return createRunRecord(sampleResult(), { id, createdAt: new Date(Date.UTC(2025, 0, 31, 12, minute)), kvscopeVersion: '0.1.0' });
}

describe('RunStore', () => {
  it('saves, lists newest first, loads and deletes records', () => {
    const store = new RunStore(join(dir, 'runs'));
    expect(store.list()).toEqual([]);
    const first = store.save(record('run-a'));
    const second = store.save(record('run-b', 1));
    utimesSync(first, new Date(1_000_000), new Date(1_000_000));
    expect(store.list().map((e) => e.id)).toEqual(['run-b', 'run-a']);
    expect(store.list()[0]).toMatchObject({ path: second, bytes: serializeRunRecord(record('run-b', 1)).length });
    expect(store.load('run-a')).toStrictEqual(record('run-a'));
    store.delete('run-a');
    expect(store.list().map((e) => e.id)).toEqual(['run-b']);
    expect(() => store.load('run-a')).toThrow(FileAccessError);
    expect(() => store.load('run-a')).toThrow(/run-a\.json does not exist/);
  });

  it('never shows a crashed write: a partial temp file is skipped, then removed once stale', () => {
    let now = Date.now();
    const store = new RunStore(dir, { now: () => now, staleTempMs: 60_000 });
    store.save(record('run-a'));
    // What a crash between write and rename leaves: half a record under the atomic writer's temp name.
    const partial = serializeRunRecord(record('run-b'));
    const temp = join(dir, `.run-b.json.${process.pid}.0123abcd.tmp`);
    writeFileSync(temp, partial.slice(0, partial.length / 2));
    expect(store.list().map((e) => e.id)).toEqual(['run-a']);
    expect(existsSync(temp)).toBe(true); // young: maybe a write in progress in another process
    now += 61_000;
    expect(store.list().map((e) => e.id)).toEqual(['run-a']);
    expect(existsSync(temp)).toBe(false);
  });

  it('replaces a record atomically and leaves no temp file behind', () => {
    const store = new RunStore(dir);
    store.save(record('same'));
    store.save({ ...record('same'), kvscopeVersion: '0.2.0' });
    expect(store.load('same').kvscopeVersion).toBe('0.2.0');
    expect(readdirSync(dir)).toEqual(['same.json']);
  });

  it('says what is wrong with a cut or foreign file', () => {
    const store = new RunStore(dir);
    const text = serializeRunRecord(record('cut'));
    writeFileSync(join(dir, 'cut.json'), text.slice(0, 200));
    writeFileSync(join(dir, 'other.json'), '{"hello": 1}');
    writeFileSync(join(dir, 'notes.txt'), 'not a record');
    expect(store.list().map((e) => e.id).sort()).toEqual(['cut', 'other']);
    expect(() => store.load('cut')).toThrow(RunRecordError);
    expect(() => store.load('cut')).toThrow(/cut\.json is not valid JSON at line \d+, column \d+ \(position 200\)\. .*cut short/s);
    expect(() => store.load('other')).toThrow(/other\.json is not a kvscope run record/);
  });

  it('never echoes a foreign file: a link in runs/ is refused unread, a copied one named by position only (issue 9, failure 8)', async () => {
    const foreign = join(dir, '..', `${dir.split('/').pop()}-passwd`);
    writeFileSync(foreign, 'root:x:0:0:root:/root:/bin/bash\nSECRET-LINE\n');
    try {
      const runs = join(dir, 'runs');
      mkdirSync(runs);
      symlinkSync(foreign, join(runs, 'linked.json'));
      copyFileSync(foreign, join(runs, 'copied.json'));
      const store = new RunStore(runs);
      for (const id of ['linked', 'copied']) {
        const sync = (() => { try { store.load(id); } catch (error) { return error as Error; } throw new Error('expected a refusal'); })();
        const async = await store.read(id).then(() => { throw new Error('expected a refusal'); }, (error: unknown) => error as Error);
        for (const error of [sync, async]) {
          expect(error.message, id).toContain(`${id}.json`);
          expect(error.message, id).not.toMatch(/root|bash|SECRET/);
        }
      }
      expect(() => store.load('linked')).toThrow(/is a symbolic link/);
      expect(() => store.load('copied')).toThrow(/copied\.json is not valid JSON at line 1, column 1 \(position 0\)/);
    } finally {
      rmSync(foreign, { force: true });
    }
  });

  it('lists a link and a non-file as what they are (to delete), never following them; deleting a link leaves its target', () => {
    const runs = join(dir, 'runs');
    mkdirSync(runs);
    const target = join(dir, 'target.json');
    writeFileSync(target, serializeRunRecord(record('target')));
    symlinkSync(target, join(runs, 'linked.json'));
    mkdirSync(join(runs, 'folder.json'));
    const store = new RunStore(runs);
    expect(store.list().map((e) => [e.id, e.notARegularFile]).sort()).toEqual([['folder', true], ['linked', true]]);
    store.delete('linked');
    expect(existsSync(target)).toBe(true);
    expect(store.list().map((e) => e.id)).toEqual(['folder']);
  });

  it('addresses records by file name: a record whose inner id differs opens and deletes under its file name (no ghost)', async () => {
    const store = new RunStore(dir);
    writeFileSync(join(dir, 'renamed.json'), serializeRunRecord(record('original-id')));
    expect(store.list().map((e) => e.id)).toEqual(['renamed']);
    expect(store.load('renamed').id).toBe('renamed');
    expect((await store.read('renamed')).id).toBe('renamed');
    expect(store.load('renamed').createdAt).toBe(record('original-id').createdAt);
    store.delete('renamed');
    expect(store.list()).toEqual([]);
  });

  it('hands out a damaged file as it is, but never through a link', async () => {
    const store = new RunStore(dir);
    writeFileSync(join(dir, 'cut.json'), '{"format": "kvscope-run", "ver');
    expect((await store.readRaw('cut')).toString('utf8')).toBe('{"format": "kvscope-run", "ver');
    writeFileSync(join(dir, '..', `${dir.split('/').pop()}-secret`), 'SECRET');
    symlinkSync(join(dir, '..', `${dir.split('/').pop()}-secret`), join(dir, 'link.json'));
    try {
      await expect(store.readRaw('link')).rejects.toThrow(/is a symbolic link/);
    } finally {
      rmSync(join(dir, '..', `${dir.split('/').pop()}-secret`), { force: true });
    }
  });

  it('refuses ids that would leave the folder', () => {
    const store = new RunStore(dir);
    for (const id of ['../escape', 'a/b', '', '.hidden']) expect(() => store.load(id), id).toThrow(/is not a run id/);
    expect(() => store.save(record('ok'))).not.toThrow();
  });
});
