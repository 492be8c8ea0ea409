import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../app/cache/cache-config.js';
import { hasShared } from '../../app/node/golden.js';
import { buildBadModelFolders, type BadModelFolder } from '../../app/node/test-support/bad-model-folders.js';
import { storiesDir, storiesSettings } from '../../app/node/test-support/stories.js';
import { createWorkbenchBackend, type WorkbenchBackend } from '../../app/node/workbench/workbench-backend.js';
import type { RunErrorPayload } from '../../app/protocol/messages.js';
import { createWebSocketApi, type WebSocketConstructor, type WebSocketWorkbenchApi } from '../../renderer/api/websocket-api.js';
import { startWorkbenchServer, type WorkbenchServer } from './workbench-server.js';

/**
 * The bad-input catalogue of issue 9 for serve mode: the same broken model folders as the CLI's,
 * opened, preflighted and run through a running serve host by the page's own client. Every request
 * is answered (a diagnostic or an error with the reason), none blocks the others, and the host
 * answers the next client afterwards.
 */
const token = 'catalogue-token-0123456789abcdefghijklmn';

/** A folder without a tokenizer still opens (a run can take prompt ids): the panel warns. */
const OPENS_WITH_A_WARNING: ReadonlySet<string> = new Set(['tokenizer.json is missing']);

describe.skipIf(!hasShared())('bad-input catalogue: a serve host opening, preflighting and running broken model folders', () => {
  let root: string;
  let folders: BadModelFolder[];
  let backend: WorkbenchBackend;
  let server: WorkbenchServer;
  let api: WebSocketWorkbenchApi;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'kvscope-catalogue-serve-'));
    folders = buildBadModelFolders(join(root, 'models'));
    backend = createWorkbenchBackend({ dataDir: join(root, 'data'), runLimits: { maxConcurrent: 2, maxQueued: 64 } });
    server = await startWorkbenchServer({ backend, rendererDir: join(root, 'renderer'), port: 0, token, log: () => undefined });
    api = createWebSocketApi(`ws://127.0.0.1:${server.port}/api`, token, { WebSocket: WebSocket as unknown as WebSocketConstructor });
  }, 60_000);
  afterAll(async () => {
    api.close();
    await server.close();
    await backend.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  it('opens every folder: a summary that says what is wrong, while other requests are answered meanwhile', async () => {
    for (const folder of folders) {
      const started = performance.now();
      // The environment request goes after the open: a read blocking the event loop (a FIFO) would hold both.
      const [summary, environment] = await Promise.all([api.openModel({ kind: 'folder', path: folder.path }), api.environment()]);
      expect(environment.kvscopeVersion, folder.name).toMatch(/\d/);
      expect(performance.now() - started, folder.name).toBeLessThan(5_000);
      const said = summary.diagnostics.map((d) => `${d.message} ${d.fix ?? ''}`).join('\n');
      if (folder.message === null) {
        expect(summary.ok, folder.name).toBe(true);
      } else if (OPENS_WITH_A_WARNING.has(folder.name)) {
        expect(summary.ok, folder.name).toBe(true);
        expect(said, folder.name).toMatch(folder.message);
      } else {
        expect(summary.ok, folder.name).toBe(false);
        expect(said, folder.name).toMatch(folder.message);
      }
    }
  });

  it('preflights every folder: config faults are refused with the reason, the rest pass', async () => {
    for (const folder of folders) {
      const configFault = /config\.json|num_hidden_layers/.test(folder.name) && !/generation_config/.test(folder.name);
      const outcome = await api.preflight({ kind: 'folder', path: folder.path }, { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32 }).then((result) => result, (error: Error) => error);
      if (configFault && folder.message !== null) {
        expect(outcome, folder.name).toBeInstanceOf(Error);
        expect((outcome as Error).message, folder.name).toMatch(folder.message);
      } else {
        expect(outcome, folder.name).toMatchObject({ ok: true });
      }
    }
  });

  it('runs every folder whose files the worker reads: each ends with the reason, none hangs the worker', async () => {
    const read = folders.filter((folder) => /FIFO|dev\/zero|17 MiB|8 MB|nests|tokenizer|generation_config/.test(folder.name));
    expect(read.length).toBeGreaterThanOrEqual(8);
    const outcomes = await Promise.all(read.map((folder) => new Promise<{ folder: BadModelFolder; error: RunErrorPayload | null }>((resolve, reject) => {
      void api.startRun(storiesSettings({ model: folder.path, prompt: 'Once', maxNewTokens: 2 }), {
        onText: () => undefined, onMetrics: () => undefined,
        onDone: () => resolve({ folder, error: null }),
        onError: (error) => resolve({ folder, error }),
      }).catch(reject);
    })));
    for (const { folder, error } of outcomes) {
      if (folder.message === null) expect(error, folder.name).toBeNull();
      else expect(`${error?.message} ${error?.fix ?? ''}`, folder.name).toMatch(folder.message);
      expect(error?.code, folder.name).not.toBe('internal');
    }
  });

  it('lists the history past a link to a foreign file in runs/, and loading it never shows that file', async () => {
    const runs = join(root, 'data', 'runs');
    mkdirSync(runs, { recursive: true });
    writeFileSync(join(root, 'foreign.txt'), 'root:x:0:0:root:/root:/bin/bash\nTOP-SECRET\n');
    symlinkSync(join(root, 'foreign.txt'), join(runs, '20250101-000000-abcdef.json'));
    // Listed as a damaged entry (issue 24), with the reason and no byte of the file it points to.
    const damaged = (await api.listRuns()).find((entry) => entry.id === '20250101-000000-abcdef');
    expect(damaged).toMatchObject({ damaged: true, exportable: false, reason: expect.stringMatching(/is a symbolic link/) });
    expect(JSON.stringify(damaged)).not.toMatch(/root|SECRET/);
    const error = await api.loadRun('20250101-000000-abcdef').catch((caught: Error) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/is a symbolic link/);
    expect((error as Error).message).not.toMatch(/root|SECRET/);
    expect((await api.environment()).kvscopeVersion).toMatch(/\d/);
  });

  it('never quotes one byte of a file a config.json links to (/etc/shadow): open, preflight and run say where, not what (issue 24)', async () => {
    const folder = join(root, 'shadow-model');
    cpSync(storiesDir(), folder, { recursive: true });
    rmSync(join(folder, 'config.json'));
    const shadow = join(root, 'shadow');
    writeFileSync(shadow, 'root:$6$SALTSALT$HASHHASH:19000:0:99999:7:::\nbin:*:19000:0:99999:7:::\n');
    symlinkSync(shadow, join(folder, 'config.json'));
    const summary = await api.openModel({ kind: 'folder', path: folder });
    const preflight = await api.preflight({ kind: 'folder', path: folder }, DEFAULT_QUANTIZED_CACHE_SETTINGS).then(() => null, (error: Error) => error);
    const run = await new Promise<RunErrorPayload | null>((resolve, reject) => {
      void api.startRun(storiesSettings({ model: folder, prompt: 'Once', maxNewTokens: 2 }), {
        onText: () => undefined, onMetrics: () => undefined, onDone: () => resolve(null), onError: resolve,
      }).catch(reject);
    });
    const said = [
      ...summary.diagnostics.map((d) => `${d.message} ${d.fix ?? ''}`),
      `${preflight?.message ?? ''} ${(preflight as { fix?: string } | null)?.fix ?? ''}`,
      `${run?.message ?? ''} ${run?.fix ?? ''}`,
    ];
    expect(summary.ok).toBe(false);
    expect(preflight).toBeInstanceOf(Error);
    expect(run).not.toBeNull();
    for (const text of said) {
      expect(text).toMatch(/config\.json is not valid JSON[^]*at line 1, column 1 \(position 0\)/);
      // Not one character of it: V8 quoted the first one ('r'), kvscope's reader once did too ("r").
      expect(text).not.toMatch(/root|SALT|HASH|bin:|"r"|'r'|\$6\$/);
    }
  });
});
