import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeModel } from '../../onnx/onnx-model.js';
import { ensureInPlaceModel } from '../onnx/in-graph-model.js';
import { writeModelWithExternalData } from '../onnx/write-external-data.js';
import { ensureSyntheticModel } from '../synthetic/ensure-synthetic-model.js';
import { testCacheDir } from '../synthetic/test-support/synthetic-session.js';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import { defaultWindowSettings, type EvalSettings } from '../../lab/eval-settings.js';
import { LabWorker, liveLabWorkerPids } from '../lab/lab-worker-client.js';
import { launchProcess } from '../worker/process-launch.js';
import { createOrtDecoderSession, setSweepJobs } from './ort-decoder-session.js';
import { prefillStep as step } from './test-support/prefill-step.js';

/** A process's memory (this one's by default) from /proc/PID/smaps_rollup, in bytes (Linux). */
function memory(pid: number | 'self' = 'self'): { pss: number; pssAnon: number; rss: number; rssAnon: number; sharedClean: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)![1]) * 1024;
  return { pss: field('Pss'), pssAnon: field('Pss_Anon'), rss: field('Rss'), rssAnon: field('Anonymous'), sharedClean: field('Shared_Clean') };
}

let dir: string;
let graph: string;
let dataBytes: number;
/** the synthetic model's own graph, its weights inside the .onnx */
let embeddedGraph: string;
let embeddedBytes: number;

beforeAll(async () => {
  const folder = await ensureSyntheticModel('synthetic', { cacheDir: testCacheDir() });
  dir = mkdtempSync(join(tmpdir(), 'kvscope-shared-weights-'));
  embeddedGraph = join(folder, 'onnx', 'model.onnx');
  embeddedBytes = statSync(embeddedGraph).size;
  graph = join(dir, 'model.onnx');
  // The synthetic model keeps its weights inside the graph: the same graph with them in external data, as large exports have.
  await writeModelWithExternalData(decodeModel(readFileSync(join(folder, 'onnx', 'model.onnx'))), graph, { location: () => 'model.onnx_data' });
  dataBytes = statSync(join(dir, 'model.onnx_data')).size;
  // Load onnxruntime's libraries and first-use state before anything is measured: in a fresh test
  // worker the first session also maps the runtime's own pages, which PSS would count as growth.
  // Unpacked (as a sweep's), so no large packed buffers are freed for later allocations to reuse.
  setSweepJobs(2);
  try {
    const warm = await createOrtDecoderSession(graph, { executionProvider: 'cpu', intraOpNumThreads: 1 });
    await step(warm);
    await warm.dispose();
  } finally {
    setSweepJobs(undefined);
  }
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Opens two sessions of the graph, runs a step on each, and returns how much this process's memory grew. */
async function twoSessions(path = graph, externalDataFolder?: string): Promise<{ pss: number; pssAnon: number; rss: number; sharedClean: number }> {
  const before = memory();
  const options = { executionProvider: 'cpu', intraOpNumThreads: 1, ...(externalDataFolder === undefined ? {} : { externalDataFolder }) } as const;
  const sessions = [await createOrtDecoderSession(path, options), await createOrtDecoderSession(path, options)];
  try {
    for (const session of sessions) await step(session);
    const after = memory();
    return { pss: after.pss - before.pss, pssAnon: after.pssAnon - before.pssAnon, rss: after.rss - before.rss, sharedClean: after.sharedClean - before.sharedClean };
  } finally {
    await Promise.all(sessions.map((session) => session.dispose()));
  }
}

describe.skipIf(process.platform !== 'linux')('sessions on external data (issue 23: the weights once per process)', () => {
  it('a sweep\'s sessions read the weights in place: no copy in either session\'s own memory, one copy in PSS', async () => {
    expect(dataBytes).toBeGreaterThan(50 * 1024 * 1024);
    setSweepJobs(2);
    try {
      const grown = await twoSessions();
      expect(grown.pssAnon).toBeLessThan(0.25 * dataBytes);
      expect(grown.pss).toBeLessThan(1.3 * dataBytes);
      // Both sessions map the pages: RSS counts them once per mapping, which is why a sweep's RSS overstates it.
      expect(grown.rss).toBeGreaterThan(1.5 * (grown.pss - grown.pssAnon));
    } finally {
      setSweepJobs(undefined);
    }
  });

  it('sessions outside a sweep prepack: each holds a packed copy of the MatMul weights of its own', async () => {
    const grown = await twoSessions();
    expect(grown.pssAnon).toBeGreaterThan(1.5 * dataBytes);
  });
});

/** A job as the weights engine takes it (test-support/weights-engine.ts): the graph as the model, the behaviour as the text's name. */
function weightsJob(name: 'warm' | 'hold'): EvalSettings {
  return {
    model: graph, executionProvider: 'cpu', cacheMode: 'dynamic', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS,
    text: { name, content: '' }, windows: { ...defaultWindowSettings(), maxWindows: 1 },
  };
}

describe.skipIf(process.platform !== 'linux')('a sweep\'s job processes on external data (issue 23: the weights once per process, RSS included)', () => {
  it('two job processes, each with a session open on the graph: each one\'s RSS holds the weights once, their PSS one copy between them', async () => {
    const engineModule = new URL('./test-support/weights-engine.ts', import.meta.url).href;
    const jobs = [0, 1].map(() => new LabWorker({ engineModule, launcher: launchProcess }));
    try {
      // onnxruntime loaded in each process (and a session opened and closed) before the baseline
      await Promise.all(jobs.map((job) => job.reference(weightsJob('warm'), { sweepJobs: 2, intraOpNumThreads: 1 }).done));
      const pids = liveLabWorkerPids();
      expect(pids).toHaveLength(2);
      expect(pids).not.toContain(process.pid);
      const before = pids.map((pid) => memory(pid));
      let holding = 0;
      let bothHolding!: () => void;
      const held = new Promise<void>((resolve) => (bothHolding = resolve));
      const holds = jobs.map((job) => job.reference(weightsJob('hold'), { sweepJobs: 2, intraOpNumThreads: 1, onProgress: () => void (++holding === 2 && bothHolding()) }));
      await held;
      const after = pids.map((pid) => memory(pid));
      for (const hold of holds) hold.cancel();
      await Promise.all(holds.map((hold) => hold.done.catch(() => undefined)));

      const grown = pids.map((_, i) => ({
        rss: after[i]!.rss - before[i]!.rss, rssFile: (after[i]!.rss - after[i]!.rssAnon) - (before[i]!.rss - before[i]!.rssAnon),
        pss: after[i]!.pss - before[i]!.pss, pssAnon: after[i]!.pssAnon - before[i]!.pssAnon,
      }));
      for (const each of grown) {
        // one mapping per process: the weights' pages once in its RSS (the session read them), not once per session of the sweep
        expect(each.rssFile).toBeGreaterThan(0.9 * dataBytes);
        expect(each.rssFile).toBeLessThan(1.1 * dataBytes);
        expect(each.rss).toBeLessThan(1.3 * dataBytes);
        // read in place: no copy in the process's own memory
        expect(each.pssAnon).toBeLessThan(0.25 * dataBytes);
      }
      // the same page-cache pages: the two processes' PSS adds up to one copy
      expect(grown[0]!.pss + grown[1]!.pss).toBeLessThan(1.3 * dataBytes);
    } finally {
      await Promise.all(jobs.map((job) => job.dispose()));
    }
  }, 60_000);
});

describe.skipIf(process.platform !== 'linux')('sessions on a graph whose weights are inside its .onnx (issue 23)', () => {
  it('the in-place graph (ensureInPlaceModel, what eval and a sweep\'s jobs run) maps them: two unpacked sessions add one copy to PSS, none to private memory', async () => {
    const derived = await ensureInPlaceModel(embeddedGraph, join(dir, 'derived'));
    setSweepJobs(2);
    try {
      const grown = await twoSessions(derived.path, derived.externalDataFolder);
      expect(grown.pssAnon).toBeLessThan(0.25 * embeddedBytes);
      expect(grown.pss).toBeLessThan(1.3 * embeddedBytes);
      // the weights are the source .onnx's page-cache pages, mapped by both sessions
      expect(grown.pss - grown.pssAnon).toBeGreaterThan(0.75 * embeddedBytes);
      // both sessions map them: clean shared pages, counted once per mapping (Shared_Clean; RSS would too, but private memory freed meanwhile moves it)
      expect(grown.sharedClean).toBeGreaterThan(1.5 * (grown.pss - grown.pssAnon));
    } finally {
      setSweepJobs(undefined);
    }
  });

  it('a session of the graph itself reads no weight from a shared mapping: each parses a copy into memory of its own', async () => {
    expect(embeddedBytes).toBeGreaterThan(50 * 1024 * 1024);
    setSweepJobs(2);
    try {
      const grown = await twoSessions(embeddedGraph);
      // The copies are private memory, but that growth is not measured here: the heap reuses what the
      // tests before freed (measured alone, two sessions add 98 MiB of private memory for 91 MiB of
      // weights). What they do not do is map the file: its pages are not in PSS.
      expect(grown.pss - grown.pssAnon).toBeLessThan(0.25 * embeddedBytes);
    } finally {
      setSweepJobs(undefined);
    }
  });
});
