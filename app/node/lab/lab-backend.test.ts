import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LabSweepHandlers, LabSweepProgress } from '../../lab/lab-api.js';
import type { SweepResults, SweepRow } from '../../lab/sweep-results.js';
import { storiesDir } from '../test-support/stories.js';
import { openSweepFolder } from '../../lab/sweep-folder.js';
import { LabBackend } from './lab-backend.js';
import { nodeSweepFolderIo } from './node-sweep-folder-io.js';
import { liveLabWorkerPids, liveLabWorkers } from './lab-worker-client.js';

let dir: string;
let lab: LabBackend;
const previousCache = process.env['KVSCOPE_CACHE_DIR'];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kvscope-lab-backend-'));
  process.env['KVSCOPE_CACHE_DIR'] = join(dir, 'cache');
  lab = new LabBackend({ dataDir: dir, kvscopeVersion: 'test', cores: 2 });
});
afterAll(async () => {
  await lab.dispose();
  if (previousCache === undefined) delete process.env['KVSCOPE_CACHE_DIR'];
  else process.env['KVSCOPE_CACHE_DIR'] = previousCache;
  rmSync(dir, { recursive: true, force: true });
  for (let waited = 0; liveLabWorkers() > 0 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
  expect(liveLabWorkers()).toBe(0);
});

function collect(): { handlers: (id: string) => LabSweepHandlers; rows: SweepRow[]; progress: LabSweepProgress[]; done: Promise<{ interrupted: boolean; results: SweepResults }> } {
  const rows: SweepRow[] = [];
  const progress: LabSweepProgress[] = [];
  let resolve!: (value: { interrupted: boolean; results: SweepResults }) => void;
  let reject!: (error: Error) => void;
  const done = new Promise<{ interrupted: boolean; results: SweepResults }>((res, rej) => { resolve = res; reject = rej; });
  return {
    rows, progress, done,
    handlers: () => ({
      onProgress: (p) => progress.push(p), onPoint: (row) => rows.push(row), onDone: resolve, onError: (error) => reject(new Error(error.message)),
    }),
  };
}

describe('the Lab backend (the workbench\'s sweeps)', () => {
  it('runs a sweep into the data folder, streams its points, lists, loads, exports and resumes it', async () => {
    const events = collect();
    const spec = { model: storiesDir(), fixed: { context: 128, windows: 1 }, grid: { nbits: [2, 4], 'group-size': [32] }, points: [{ cache: 'dynamic' }] };
    const ticket = await lab.beginSweep({ kind: 'spec', name: 'bits', spec: spec as never, jobs: 1 }, events.handlers);
    expect(ticket).toMatchObject({ points: 3, complete: 0 });
    const outcome = await events.done;
    expect(outcome.interrupted).toBe(false);
    expect(outcome.results.rows.map((row) => row.name)).toEqual(['group-size-32_nbits-2', 'group-size-32_nbits-4', 'cache-dynamic']);
    expect(events.rows.map((row) => row.status)).toEqual(['ok', 'ok', 'ok']);
    expect(events.progress.at(-1)).toEqual({ done: 3, total: 3, running: [] });
    const [summary] = await lab.listSweeps();
    expect(summary).toMatchObject({ id: ticket.sweepId, name: 'bits', model: 'stories260k', points: 3, complete: 3, status: 'complete', backends: ['quanto'], nbits: [2, 4] });
    // the best of the quantized points, not the dynamic cache (the reference itself, KLD 0)
    expect(summary!.bestKld).toBe(Math.min(outcome.results.rows[0]!.result!.kldMean, outcome.results.rows[1]!.result!.kldMean));
    expect(summary!.bestKld).toBeGreaterThan(0);
    const view = await lab.loadSweep(ticket.sweepId);
    expect(view.results).toEqual(outcome.results);
    const record = await lab.loadPoint(ticket.sweepId, 'group-size-32_nbits-4');
    expect(record.summary.kld.mean).toBe(outcome.results.rows[1]!.result!.kldMean);
    const csv = await lab.exportSweep(ticket.sweepId, 'csv');
    expect(csv.content.split('\r\n')[0]).toMatch(/^index,name,status,reason,opt_cache,opt_context/);
    // A resumed complete sweep has nothing left to run.
    const again = collect();
    expect(await lab.beginSweep({ kind: 'resume', sweepId: ticket.sweepId, jobs: 2 }, again.handlers)).toMatchObject({ points: 3, complete: 3 });
    expect((await again.done).results).toEqual(outcome.results);
  });

  it('runs a sweep of two jobs in two job processes of its own (issue 23), with the results of one job', async () => {
    const bits = (await lab.listSweeps()).find((sweep) => sweep.name === 'bits')!;
    const events = collect();
    const spec = { model: storiesDir(), fixed: { context: 128, windows: 1 }, grid: { nbits: [2, 4], 'group-size': [32] }, points: [{ cache: 'dynamic' }] };
    const pids = new Set<number>();
    const watch = setInterval(() => liveLabWorkerPids().forEach((pid) => pids.add(pid)), 10);
    try {
      await lab.beginSweep({ kind: 'spec', name: 'bits, two jobs', spec: spec as never, jobs: 2 }, events.handlers);
      const outcome = await events.done;
      expect(outcome.results.rows).toEqual((await lab.loadSweep(bits.id)).results.rows);
    } finally {
      clearInterval(watch);
    }
    expect(pids.size).toBe(2);
    expect(pids.has(process.pid)).toBe(false);
    expect(liveLabWorkerPids()).toEqual([]);
  });

  it('refuses typed settings that make no sweep in the words the page shows, before making a folder', async () => {
    const run = {
      model: storiesDir(), executionProvider: 'cpu', cacheMode: 'dynamic', prompt: '', maxNewTokens: 1, reference: false,
      quantization: { backend: 'quanto', nbits: 4, axisKey: 0, axisValue: 0, groupSize: 64, residualLength: 128, layerPolicy: 'all' },
      sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 },
    } as const;
    const vary = { backend: [], nbits: [2], groupSize: [], residualLength: [], axisKey: [], axisValue: [] };
    const before = existsSync(join(dir, 'sweeps')) ? readdirSync(join(dir, 'sweeps')).length : 0;
    await expect(lab.beginSweep({ kind: 'new', name: 'x', jobs: 1, settings: { run, vary, includeDynamic: false, evaluation: { kind: 'text', context: 128, windows: 1 } } }, collect().handlers))
      .rejects.toThrow('--nbits only applies to the quantized cache; the run panel is set to the dynamic cache.');
    expect(existsSync(join(dir, 'sweeps')) ? readdirSync(join(dir, 'sweeps')).length : 0).toBe(before);
  });

  it('refuses a spec with a key eval does not have, and an unknown sweep', async () => {
    const events = collect();
    await expect(lab.beginSweep({ kind: 'spec', name: 'x', spec: { model: storiesDir(), grid: { bits: [2] } } as never, jobs: 1 }, events.handlers))
      .rejects.toThrow(/"bits" is not an option of kvscope eval/);
    await expect(lab.loadSweep('nope')).rejects.toThrow(/no saved sweep nope/);
  });

  it('lists and loads a retrieval sweep written by kvscope sweep into its folder', async () => {
    const points = [{ index: 0, name: 'point', options: { task: 'passkey', lengths: '256' } }];
    const manifest = { format: 'kvscope-sweep', version: 1, specSha256: 'c'.repeat(64), spec: { model: 'synthetic-retrieval', fixed: {}, grid: {}, points: [] }, points, shard: null } as const;
    openSweepFolder(nodeSweepFolderIo(), join(dir, 'sweeps', 'passkey'), manifest);
    expect((await lab.loadSweep('passkey')).points).toEqual(points);
  });

  it('runs a retrieval sweep (points with a task) through kvscope sweep\'s runner: rows with maps, resumable (issue 28)', async () => {
    const events = collect();
    const spec = {
      model: 'synthetic-retrieval',
      fixed: { task: 'passkey', lengths: '256', depths: '50', samples: 1, seed: 0, cache: 'quantized', backend: 'quanto' },
      grid: { nbits: [2, 4] }, points: [],
    };
    const ticket = await lab.beginSweep({ kind: 'spec', name: 'passkey bits', spec: spec as never, jobs: 1 }, events.handlers);
    expect(ticket).toMatchObject({ points: 2, complete: 0 });
    const outcome = await events.done;
    expect(outcome.interrupted).toBe(false);
    // the testbed retrieves exactly at full precision; quanto 2-bit loses the pass key, 4-bit keeps it (as the CLI's sweep finds)
    expect(outcome.results.rows.map((row) => [row.name, row.status, row.retrieval?.task, row.retrieval?.accuracy, row.retrieval?.accuracyReference])).toEqual([
      ['nbits-2', 'ok', 'passkey', 0, 1], ['nbits-4', 'ok', 'passkey', 1, 1],
    ]);
    expect(outcome.results.rows[0]!.retrieval!.map).toMatchObject({ lengths: [256], depths: [50], accuracy: [[0]] });
    expect(outcome.results.rows[1]!.retrieval!.referenceMap.accuracy).toEqual([[1]]);
    expect(events.rows.map((row) => row.name)).toEqual(['nbits-2', 'nbits-4']);
    expect(events.progress.at(-1)).toEqual({ done: 2, total: 2, running: [] });
    // read back as the Lab reads every sweep: the map panel draws from these rows
    const view = await lab.loadSweep(ticket.sweepId);
    expect(view.results).toEqual(outcome.results);
    expect((await lab.listSweeps()).find((summary) => summary.id === ticket.sweepId)).toMatchObject({ name: 'passkey bits', model: 'synthetic-retrieval', complete: 2, status: 'complete' });
    // the reference decoded once for the sweep, as the CLI's sweep keeps it
    expect(existsSync(join(dir, 'sweeps', ticket.sweepId, 'retrieval-reference.json'))).toBe(true);
    // resumable: a complete sweep has nothing left to run
    const again = collect();
    expect(await lab.beginSweep({ kind: 'resume', sweepId: ticket.sweepId, jobs: 1 }, again.handlers)).toMatchObject({ points: 2, complete: 2 });
    expect((await again.done).results).toEqual(outcome.results);
  }, 60_000);

  it('stops a retrieval sweep at Stop (the point in flight unrecorded) and resumes it where it stopped', async () => {
    const spec = {
      model: 'synthetic-retrieval',
      fixed: { task: 'passkey', lengths: '256', depths: '0', samples: 1, seed: 3, cache: 'quantized', backend: 'quanto' },
      grid: { nbits: [2, 4] }, points: [],
    };
    const first = collect();
    let sweepId = '';
    // Stop as soon as the second point starts: the first is recorded, the second cancelled mid-run
    const ticket = await lab.beginSweep({ kind: 'spec', name: 'stopped', spec: spec as never, jobs: 1 }, (id) => {
      const handlers = first.handlers(id);
      return { ...handlers, onProgress: (p) => { handlers.onProgress(p); if (p.running.includes('nbits-4')) void lab.cancelSweep(sweepId); } };
    });
    sweepId = ticket.sweepId;
    // the first progress events can arrive before the ticket: the cancel then goes through here
    if (first.progress.some((p) => p.running.includes('nbits-4'))) await lab.cancelSweep(sweepId);
    const stopped = await first.done;
    expect(stopped.interrupted).toBe(true);
    expect(stopped.results.rows.map((row) => row.name)).toEqual(['nbits-2']);
    expect(existsSync(join(dir, 'sweeps', sweepId, 'nbits-4', 'retrieval.json'))).toBe(false);
    expect((await lab.listSweeps()).find((summary) => summary.id === sweepId)).toMatchObject({ status: 'partial', complete: 1 });
    const again = collect();
    expect(await lab.beginSweep({ kind: 'resume', sweepId, jobs: 1 }, again.handlers)).toMatchObject({ points: 2, complete: 1 });
    const resumed = await again.done;
    expect(again.rows.map((row) => row.name)).toEqual(['nbits-4']);
    expect(resumed.results.rows.map((row) => [row.name, row.retrieval?.accuracyReference])).toEqual([['nbits-2', 1], ['nbits-4', 1]]);
  }, 60_000);

  it('records a length past the model\'s positions and a folder without a tokenizer as rows that say so in the retrieval eval\'s words, and refuses a mixed spec before making a folder', async () => {
    const events = collect();
    const spec = { model: storiesDir(), fixed: { task: 'passkey', lengths: '1024', depths: '50', cache: 'dynamic' }, grid: {}, points: [] };
    await lab.beginSweep({ kind: 'spec', name: 'too long', spec: spec as never, jobs: 1 }, events.handlers);
    const [row] = (await events.done).results.rows;
    // refused before the run started, by the runner's own prompt-length check, its fix in the task's terms
    expect(row).toMatchObject({ status: 'failed', result: null });
    expect(row!.reason).toMatch(/max_position_embeddings = 512.*The run was not started\.\nfix: Give --lengths of at most 512/s);
    // a folder without tokenizer.json: the prompts cannot be fitted, and the row says so with the fix
    const bare = join(dir, 'no-tokenizer');
    cpSync(storiesDir(), bare, { recursive: true });
    rmSync(join(bare, 'tokenizer.json'));
    const untokenized = collect();
    await lab.beginSweep({ kind: 'spec', name: 'no tokenizer', spec: { ...spec, model: bare, fixed: { ...spec.fixed, lengths: '256' } } as never, jobs: 1 }, untokenized.handlers);
    const [bareRow] = (await untokenized.done).results.rows;
    expect(bareRow).toMatchObject({ status: 'failed', result: null });
    expect(bareRow!.reason).toMatch(/no tokenizer\.json.*kvscope eval --task fits each prompt with the model's tokenizer/s);
    const before = readdirSync(join(dir, 'sweeps')).length;
    const mixed = { model: storiesDir(), fixed: {}, grid: {}, points: [{ task: 'passkey', lengths: '256' }, { nbits: 2 }] };
    await expect(lab.beginSweep({ kind: 'spec', name: 'mixed', spec: mixed as never, jobs: 1 }, collect().handlers)).rejects.toThrow(/a sweep is all retrieval points or none/);
    expect(readdirSync(join(dir, 'sweeps'))).toHaveLength(before);
  }, 60_000);
});
