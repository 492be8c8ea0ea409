import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DamagedRunSummary, HistoryEntry, RunSummary } from '../../protocol/workbench-api.js';
import { sampleResult } from '../../protocol/test-support/sample-messages.js';
import { createRunRecord, serializeRunRecord, type RunRecord } from '../../record/run-record.js';
import { createWorkbenchBackend, type WorkbenchBackend } from './workbench-backend.js';

/**
 * Issue 24: damaged records in History. Every kind of file the runs folder can hold that is not a
 * readable record is listed as damaged, with a reason that never quotes the file, and can be
 * deleted (and exported as it is where it is a regular file within the cap); a record whose inner
 * id differs from its file name is opened and deleted by its file name.
 */
const SECRET = 'TOP-SECRET-0xC0FFEE';
let root: string;
let runs: string;
let backend: WorkbenchBackend;

function record(id: string): RunRecord {
  return createRunRecord(sampleResult(), { id, createdAt: new Date(Date.UTC(2025, 0, 31, 12, 0)), kvscopeVersion: '0.1.0' });
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'kvscope-damaged-runs-'));
  runs = join(root, 'data', 'runs');
  mkdirSync(runs, { recursive: true });
  backend = createWorkbenchBackend({ dataDir: join(root, 'data'), kvscopeVersion: '0.1.0-test' });
});
afterEach(async () => {
  await backend.dispose();
  rmSync(root, { recursive: true, force: true });
});

function writeDamagedFolder(): void {
  writeFileSync(join(runs, 'good.json'), serializeRunRecord(record('good')));
  writeFileSync(join(runs, 'renamed.json'), serializeRunRecord(record('inner-id-differs')));
  const whole = serializeRunRecord(record('cut'));
  writeFileSync(join(runs, 'cut.json'), whole.slice(0, whole.length / 2));
  const typed = JSON.parse(serializeRunRecord(record('typed'))) as Record<string, unknown>;
  writeFileSync(join(runs, 'typed.json'), JSON.stringify({ ...typed, kvscopeVersion: 7, createdAt: SECRET }));
  const future = JSON.parse(serializeRunRecord(record('future'))) as Record<string, unknown>;
  writeFileSync(join(runs, 'future.json'), JSON.stringify({ ...future, version: 99 }));
  // 300 MB, sparse: past the 256 MiB cap without taking the disk space.
  writeFileSync(join(runs, 'huge.json'), '{');
  truncateSync(join(runs, 'huge.json'), 300_000_000);
  writeFileSync(join(root, 'shadow'), `root:${SECRET}:19000:0:99999:7:::\n`);
  symlinkSync(join(root, 'shadow'), join(runs, 'linked.json'));
  writeFileSync(join(runs, 'foreign.json'), `{"format": "${SECRET}"}`);
}

const damagedOf = (list: readonly HistoryEntry[]): DamagedRunSummary[] => list.filter((entry): entry is DamagedRunSummary => 'damaged' in entry);
const runsOf = (list: readonly HistoryEntry[]): RunSummary[] => list.filter((entry): entry is RunSummary => !('damaged' in entry));

describe('History lists damaged records (issue 24)', () => {
  it('lists each kind of damaged file with its reason and a way out, never a byte of the file', async () => {
    writeDamagedFolder();
    const list = await backend.listRuns();
    expect(runsOf(list).map((run) => run.id).sort()).toEqual(['good', 'renamed']);
    const damaged = new Map(damagedOf(list).map((file) => [file.id, file]));
    expect([...damaged.keys()].sort()).toEqual(['cut', 'foreign', 'future', 'huge', 'linked', 'typed']);
    const expected: Record<string, [RegExp, RegExp, boolean]> = {
      cut: [/cut\.json is not valid JSON( at line \d+, column \d+ \(position \d+\)| \(the text ends too soon[^)]*\))\. The file looks cut short/, /Export the raw file/, true],
      typed: [/typed\.json is not a valid run record: createdAt: expected an ISO 8601 date\.$/, /Export the raw file/, true],
      future: [/future\.json is a version 99 run record; this kvscope reads version 1\. Update kvscope to open it\./, /Update kvscope/, true],
      huge: [/huge\.json is too large for a run record: 286 MiB, more than the 256 MiB kvscope reads\./, /no run record is that large/, false],
      linked: [/linked\.json is a symbolic link; kvscope reads a run record only from a file it wrote itself/, /the file it points to is left alone/, false],
      foreign: [/foreign\.json is not a kvscope run record \(its "format" is something else, expected "kvscope-run-record"\)\./, /Export the raw file/, true],
    };
    for (const [id, [reason, fix, exportable]] of Object.entries(expected)) {
      const file = damaged.get(id)!;
      expect(file.reason, id).toMatch(reason);
      expect(file.fix, id).toMatch(fix);
      expect(file.exportable, id).toBe(exportable);
      expect(file.fileName).toBe(`${id}.json`);
      expect(`${file.reason} ${file.fix}`, id).not.toMatch(new RegExp(`${SECRET}|root:`));
    }
    expect(damaged.get('huge')!.bytes).toBe(300_000_000);
    // A second list answers from the cache while the files are unchanged, with the same entries.
    expect(await backend.listRuns()).toEqual(list);
  });

  it('exports a damaged regular file as it is, and refuses a link or an oversized file unread', async () => {
    writeDamagedFolder();
    await backend.listRuns();
    const whole = serializeRunRecord(record('cut'));
    const exported = await backend.exportRun('cut', 'raw');
    expect(exported).toMatchObject({ fileName: 'cut.json', mimeType: 'application/json', content: whole.slice(0, whole.length / 2) });
    for (const id of ['linked', 'huge']) {
      const error = await backend.exportRun(id, 'raw').catch((caught: Error) => caught);
      expect(error, id).toBeInstanceOf(Error);
      expect((error as Error).message, id).not.toContain(SECRET);
    }
  });

  it('deletes every damaged file by its name (a link goes, the file it points to stays), and opens and deletes a renamed record', async () => {
    writeDamagedFolder();
    const list = await backend.listRuns();
    for (const file of damagedOf(list)) await backend.deleteRun(file.id);
    expect(existsSync(join(root, 'shadow'))).toBe(true);
    const renamed = await backend.loadRun('renamed');
    expect(renamed.id).toBe('renamed');
    expect((await backend.exportRun('renamed', 'json')).fileName).toBe('kvscope-run-renamed.json');
    await backend.deleteRun('renamed');
    expect((await backend.listRuns()).map((entry) => entry.id)).toEqual(['good']);
  });
});
