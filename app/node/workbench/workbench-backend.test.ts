import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import type { GenerationResult } from '../../engine/generation-result.js';
import type { StepMetrics } from '../../engine/types.js';
import type { RunErrorPayload } from '../../protocol/messages.js';
import type { RunSummary } from '../../protocol/workbench-api.js';
import { parseRunRecord } from '../../record/parse-run-record.js';
import { RUN_CSV_COLUMNS } from '../../record/run-record-csv.js';
import { sharedDir } from '../golden.js';
import { PROMPT_200_KB } from '../test-support/long-prompt.js';
import { storiesSettings } from '../test-support/stories.js';
import { createWorkbenchBackend, type WorkbenchBackend } from './workbench-backend.js';
import { startRun as startWorkerRun } from '../worker/worker-client.js';

const stories = join(sharedDir(), 'models', 'stories260k');

interface RunOutcome {
  readonly result: GenerationResult;
  readonly savedRunId: string | null;
  readonly text: string;
  readonly steps: StepMetrics[];
}

function runToEnd(backend: WorkbenchBackend, settings = storiesSettings({ maxNewTokens: 16 })): { ticket: Promise<{ runId: string }>; outcome: Promise<RunOutcome> } {
  let text = '';
  const steps: StepMetrics[] = [];
  let ticket!: Promise<{ runId: string }>;
  const outcome = new Promise<RunOutcome>((resolve, reject) => {
    ticket = backend.startRun(settings, {
      onText: (delta) => void (text += delta),
      onMetrics: (batch) => void steps.push(...batch),
      onDone: (result, savedRunId) => resolve({ result, savedRunId, text, steps }),
      onError: (error: RunErrorPayload) => reject(new Error(`${error.code}: ${error.message}`)),
    });
  });
  return { ticket, outcome };
}

describe('workbench backend', () => {
  let dataDir: string;
  let backend: WorkbenchBackend;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'kvscope-workbench-'));
    backend = createWorkbenchBackend({ dataDir, kvscopeVersion: '0.1.0-test' });
  });
  afterAll(async () => {
    await backend.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('opens stories260k: a sound summary with its five layers', async () => {
    const summary = await backend.openModel({ kind: 'folder', path: stories });
    expect(summary).toMatchObject({ ok: true, displayName: 'stories260k', folder: stories, onnxFile: 'onnx/model.onnx', kvDtype: 'float32', diagnostics: [] });
    expect(summary.onnxFiles).toEqual(expect.arrayContaining(['onnx/model.onnx', 'onnx/model_fp16.onnx']));
    expect(summary.config?.layers.numLayers).toBe(5);
    expect(summary.config?.geometry.kvCacheLayers).toHaveLength(5);
    expect(summary).toMatchObject({ hasTokenizer: true, vocabSize: 512 });
  });

  it('says which folder has no tokenizer and how many ids its graph takes, so the run panel asks for ids', async () => {
    const summary = await backend.openModel({ kind: 'folder', path: join(sharedDir(), 'models', 'ort-genai-tiny', 'lfm2-hybrid-stub') });
    expect(summary).toMatchObject({ ok: true, hasTokenizer: false, vocabSize: 1000 });
    expect(summary.diagnostics).toContainEqual(expect.objectContaining({ code: 'tokenizer-missing', fix: expect.stringContaining('the run panel takes them in place of text') }));
  });

  it('opens a chosen graph variant', async () => {
    const summary = await backend.openModel({ kind: 'folder', path: stories }, 'onnx/model_fp16.onnx');
    expect(summary).toMatchObject({ ok: true, onnxFile: 'onnx/model_fp16.onnx', kvDtype: 'float16' });
  });

  it('reports a folder without config.json as a diagnostic, without throwing', async () => {
    const empty = join(dataDir, 'not-a-model');
    mkdirSync(empty);
    const summary = await backend.openModel({ kind: 'folder', path: empty });
    expect(summary.ok).toBe(false);
    expect(summary.config).toBeNull();
    expect(summary.diagnostics[0]).toMatchObject({ code: 'config-missing', severity: 'error' });
    expect(summary.diagnostics[0]!.message).toMatch(/has neither config\.json nor genai_config\.json/);
    expect(summary.diagnostics[0]!.fix).toMatch(/config\.json/);
  });

  it('reports a missing folder the same way', async () => {
    const summary = await backend.openModel({ kind: 'folder', path: join(dataDir, 'nowhere') });
    expect(summary).toMatchObject({ ok: false, folder: null, diagnostics: [expect.objectContaining({ code: 'model-folder-missing' })] });
  });

  it('runs the preflight for a model folder', async () => {
    const accepted = await backend.preflight({ kind: 'folder', path: stories }, { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32 }, { sequenceLengths: [1, 7] });
    expect(accepted.ok).toBe(true);
    expect(accepted.layers).toHaveLength(5);
    const refused = await backend.preflight({ kind: 'folder', path: stories }, { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'HQQ' });
    expect(refused.ok).toBe(false);
    expect(refused.diagnostics[0]).toMatchObject({ code: 'unknown-backend', origin: 'transformers' });
  });

  it('refuses a preflight without a config with a message, as an error', async () => {
    await expect(backend.preflight({ kind: 'folder', path: join(dataDir, 'not-a-model') }, DEFAULT_QUANTIZED_CACHE_SETTINGS))
      .rejects.toThrow(/config\.json/);
  });

  it('runs 16 tokens with a dynamic cache, saves the record atomically and lists it', async () => {
    const { ticket, outcome } = runToEnd(backend);
    const { runId } = await ticket;
    const run = await outcome;
    expect(run.savedRunId).toBe(runId);
    expect(run.result.generatedTokenIds).toHaveLength(16);
    expect(run.result.settings.cacheMode).toBe('dynamic');
    expect(run.steps.map((step) => step.step)).toEqual([...Array(16).keys()]);
    expect(run.text).toBe(run.result.text);

    const runsDir = join(dataDir, 'runs');
    // Atomic: the record and nothing else (no temp file left behind), and it reads back whole.
    expect(readdirSync(runsDir)).toEqual([`${runId}.json`]);
    const record = parseRunRecord(readFileSync(join(runsDir, `${runId}.json`), 'utf8'), 'saved run');
    expect(record).toMatchObject({ id: runId, kvscopeVersion: '0.1.0-test', generatedTokenIds: run.result.generatedTokenIds });

    const list = await backend.listRuns();
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      id: runId, modelName: 'stories260k', cacheMode: 'dynamic', backend: null, nbits: null, executionProvider: 'cpu', tokens: 16, stopReason: 'max-new-tokens',
    });
    expect((list[0] as RunSummary).totalKvBytes).toBeGreaterThan(0);
    expect((await backend.loadRun(runId)).steps).toHaveLength(16);
  });

  it('exports a saved run as JSON and CSV', async () => {
    const [summary] = await backend.listRuns();
    const json = await backend.exportRun(summary!.id, 'json');
    expect(json).toMatchObject({ fileName: `kvscope-run-${summary!.id}.json`, mimeType: 'application/json', saved: null });
    expect(parseRunRecord(json.content, json.fileName).id).toBe(summary!.id);
    const csv = await backend.exportRun(summary!.id, 'csv');
    expect(csv.mimeType).toMatch(/^text\/csv/);
    const lines = csv.content.trim().split(/\r?\n/);
    expect(lines[0]).toBe(RUN_CSV_COLUMNS.join(','));
    expect(lines).toHaveLength(1 + 16);
  });

  it('deletes a run, and refuses an unknown id with a message', async () => {
    const [summary] = await backend.listRuns();
    await backend.deleteRun(summary!.id);
    expect(await backend.listRuns()).toEqual([]);
    await expect(backend.loadRun(summary!.id)).rejects.toThrow(/does not exist/);
    await expect(backend.loadRun('../recent')).rejects.toThrow(/is not a run id/);
  });

  it('keeps recent models most recent first, without duplicates, across restarts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvscope-recent-'));
    try {
      const folders = Array.from({ length: 12 }, (_, i) => join(dir, `model-${i}`));
      for (const folder of folders) mkdirSync(folder);
      const changes: number[] = [];
      const first = createWorkbenchBackend({ dataDir: dir, onRecentModelsChanged: (models) => changes.push(models.length) });
      await first.openModel({ kind: 'folder', path: stories });
      expect(await first.recentModels()).toEqual([{ kind: 'folder', path: stories }]);
      // Not model folders: not remembered.
      await first.openModel({ kind: 'folder', path: folders[0]! });
      expect(await first.recentModels()).toHaveLength(1);
      await first.openModel({ kind: 'folder', path: join(stories, 'onnx', 'model.onnx') });
      expect(await first.recentModels()).toEqual([{ kind: 'folder', path: stories }]);
      expect(changes).toEqual([1, 1]);
      await first.dispose();

      // Written as the file the next launch reads.
      const file = JSON.parse(readFileSync(join(dir, 'recent.json'), 'utf8')) as { models: unknown[] };
      expect(file.models).toEqual([{ kind: 'folder', path: stories }]);
      expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('caps the recent list at ten and drops folders that disappeared', async () => {
    const { RecentModels } = await import('./recent-models.js');
    const dir = mkdtempSync(join(tmpdir(), 'kvscope-recent-'));
    try {
      const recent = new RecentModels(join(dir, 'recent.json'));
      const folders = Array.from({ length: 12 }, (_, i) => join(dir, `model-${i}`));
      for (const folder of folders) {
        mkdirSync(folder);
        recent.add({ kind: 'folder', path: folder });
      }
      recent.add({ kind: 'synthetic' });
      recent.add({ kind: 'folder', path: folders[5]! });
      const reread = new RecentModels(join(dir, 'recent.json')).list();
      expect(reread).toHaveLength(10);
      expect(reread.slice(0, 3)).toEqual([{ kind: 'folder', path: folders[5] }, { kind: 'synthetic' }, { kind: 'folder', path: folders[11] }]);
      rmSync(folders[11]!, { recursive: true });
      expect(new RecentModels(join(dir, 'recent.json')).list().map((source) => (source.kind === 'folder' ? source.path : source.kind)))
        .not.toContain(folders[11]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('starts over from an unreadable recent.json', async () => {
    const { RecentModels } = await import('./recent-models.js');
    const dir = mkdtempSync(join(tmpdir(), 'kvscope-recent-'));
    try {
      const path = join(dir, 'recent.json');
      writeFileSync(path, '{"format": "kvscope-recent-models", "models": [{"kind": "folder"}]');
      expect(new RecentModels(path).list()).toEqual([]);
      expect(existsSync(path)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opens a model and finishes a run in a data folder that cannot be written (issue 9, failure 4)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvscope-unwritable-'));
    try {
      // A data folder below a regular file: mkdir and every write fail (ENOTDIR), even for root, as a
      // read-only or full disk does.
      writeFileSync(join(dir, 'blocker'), '');
      const stuck = createWorkbenchBackend({ dataDir: join(dir, 'blocker', 'data') });
      try {
        const summary = await stuck.openModel({ kind: 'folder', path: stories });
        expect(summary.ok).toBe(true);
        expect(summary.diagnostics).toEqual([expect.objectContaining({ code: 'data-folder-unwritable', severity: 'info', message: expect.stringMatching(/could not be added to Open Recent/) })]);
        expect(await stuck.recentModels()).toEqual([{ kind: 'folder', path: stories }]); // kept for this session

        const { ticket, outcome } = runToEnd(stuck, storiesSettings({ maxNewTokens: 4 }));
        const { runId } = await ticket;
        const run = await outcome;
        expect(run.savedRunId).toBeNull();
        expect(run.result.generatedTokenIds).toHaveLength(4);
        expect(run.result.diagnostics).toContainEqual(expect.objectContaining({ code: 'run-not-saved', severity: 'info', message: expect.stringMatching(/could not be saved.*can still be exported/s) }));
        const exported = await stuck.exportRun(runId, 'json');
        expect(parseRunRecord(exported.content, exported.fileName).generatedTokenIds).toEqual(run.result.generatedTokenIds);
        expect((await stuck.exportRun(runId, 'csv')).content.trim().split('\n')).toHaveLength(1 + 4);
        expect((await stuck.loadRun(runId)).id).toBe(runId);
      } finally {
        await stuck.dispose();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes a 200 KB prompt (the Electron host\'s backend): the real engine refuses its prefill clearly from a prefix (issue 24), a stand-in engine runs it and saves it', async () => {
    const error = await new Promise<RunErrorPayload>((resolve, reject) => {
      void backend.startRun(storiesSettings({ prompt: PROMPT_200_KB, maxNewTokens: 2 }), {
        onText: () => undefined, onMetrics: () => undefined, onDone: () => reject(new Error('expected a refusal')), onError: resolve,
      });
    });
    // The run panel's runs may pass the positions (the panel says so before): memory is the bound, found
    // from a prefix, so the 100,000-token prompt is not encoded whole.
    expect(error).toMatchObject({
      code: 'invalid-input',
      message: expect.stringMatching(/^The prompt is more than \d+ tokens \(its first \d+ of 200\d{3} characters alone encode to \d+; the rest was not encoded\); prefilling more than \d+ tokens at once needs more memory/),
      fix: expect.stringMatching(/^Shorten the prompt to at most \d+ tokens\.$/),
    });

    const dir = mkdtempSync(join(tmpdir(), 'kvscope-long-prompt-'));
    const fake = createWorkbenchBackend({ dataDir: dir, runOptions: { engineModule: new URL('../../../workers/test-support/fake-engine.ts', import.meta.url).href } });
    try {
      const { outcome } = runToEnd(fake, storiesSettings({ prompt: PROMPT_200_KB, maxNewTokens: 3 }));
      const run = await outcome;
      expect(run.result.settings.prompt).toBe(PROMPT_200_KB);
      expect((await fake.loadRun(run.savedRunId!)).settings.prompt).toBe(PROMPT_200_KB);
    } finally {
      await fake.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stopRuns cancels the runs in flight, saves them as cancelled, then refuses new ones (issue 9, failure 7)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvscope-stop-'));
    const fake = createWorkbenchBackend({ dataDir: dir, runOptions: { engineModule: new URL('../../../workers/test-support/fake-engine.ts', import.meta.url).href }, runLimits: { maxConcurrent: 2, maxQueued: 4 } });
    try {
      const runs = [runToEnd(fake, storiesSettings({ prompt: 'slow', maxNewTokens: 10_000 })), runToEnd(fake, storiesSettings({ prompt: 'slow', maxNewTokens: 10_000 }))];
      await Promise.all(runs.map((run) => run.ticket));
      await new Promise((resolve) => setTimeout(resolve, 300));
      await fake.stopRuns();
      for (const run of runs) {
        const outcome = await run.outcome;
        expect(outcome.result.stopReason).toBe('cancelled');
        expect(outcome.savedRunId).not.toBeNull();
        expect((await fake.loadRun(outcome.savedRunId!)).stopReason).toBe('cancelled');
      }
      expect(() => fake.beginRun(storiesSettings(), () => ({ onText: () => undefined, onMetrics: () => undefined, onDone: () => undefined, onError: () => undefined })))
        .toThrow(/shutting down/);
    } finally {
      await fake.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lets at most its limit of runs go at once, queues the next and refuses past the queue (issue 9, failure 8)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvscope-limit-'));
    const starts: string[] = [];
    const fake = createWorkbenchBackend({
      dataDir: dir,
      runLimits: { maxConcurrent: 1, maxQueued: 1 },
      startRun: (settings, handlers) => {
        starts.push(settings.prompt);
        return startWorkerRun(settings, handlers, { engineModule: new URL('../../../workers/test-support/fake-engine.ts', import.meta.url).href });
      },
    });
    try {
      const first = runToEnd(fake, storiesSettings({ prompt: 'slow', maxNewTokens: 10 }));
      const second = runToEnd(fake, storiesSettings({ prompt: 'steps', maxNewTokens: 2 }));
      await Promise.all([first.ticket, second.ticket]);
      expect(starts).toEqual(['slow']); // the second waits for the first
      expect(() => fake.beginRun(storiesSettings(), () => ({ onText: () => undefined, onMetrics: () => undefined, onDone: () => undefined, onError: () => undefined })))
        .toThrow(/1 runs are going and 1 are waiting, the most this workbench takes \(1 at once, 1 waiting\)/);
      expect((await first.outcome).result.generatedTokenIds).toHaveLength(10);
      expect((await second.outcome).result.generatedTokenIds).toHaveLength(2);
      expect(starts).toEqual(['slow', 'steps']);
    } finally {
      await fake.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('describes the environment with the execution providers', async () => {
    const environment = await backend.environment();
    expect(environment).toMatchObject({ kvscopeVersion: '0.1.0-test', defaultModel: { kind: 'synthetic' } });
    expect(environment.ortVersion).toMatch(/^\d+\.\d+\.\d+/);
    const cpu = environment.executionProviders.find((provider) => provider.name === 'cpu');
    expect(cpu).toEqual({ name: 'cpu', available: true });
    expect(environment.executionProviders.map((provider) => provider.name)).toEqual(['cpu', 'webgpu', 'cuda', 'dml', 'coreml']);
    if (process.platform === 'linux') expect(environment.executionProviders.find((provider) => provider.name === 'dml')?.reason).toMatch(/Windows/);
  });
});
