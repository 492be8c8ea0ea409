import { EventEmitter } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { GenerationResult } from '../../app/engine/generation-result.js';
import { storiesSettings } from '../../app/node/test-support/stories.js';
import { createWorkbenchBackend } from '../../app/node/workbench/workbench-backend.js';
import { installQuitGuard } from './quit-guard.js';

vi.mock('electron', () => ({}));

const root = mkdtempSync(join(tmpdir(), 'kvscope-quit-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('quitting the Electron app (issue 9, failure 7)', () => {
  it('on SIGTERM: holds the quit until the runs in flight are cancelled and saved, then quits once', async () => {
    const backend = createWorkbenchBackend({ dataDir: root, runOptions: { engineModule: new URL('../../workers/test-support/fake-engine.ts', import.meta.url).href } });
    const app = new EventEmitter() as EventEmitter & { quit: () => void };
    const quits: number[] = [];
    app.quit = () => {
      quits.push(Date.now());
      const event = { prevented: false, preventDefault() { this.prevented = true; } };
      app.emit('before-quit', event);
    };
    const signals = new EventEmitter();
    installQuitGuard(app as never, () => backend, signals as never);

    const done = new Promise<{ result: GenerationResult; savedRunId: string | null }>((resolve, reject) => {
      void backend.startRun(storiesSettings({ prompt: 'slow', maxNewTokens: 10_000 }), {
        onText: () => undefined, onMetrics: () => undefined, onDone: (result, savedRunId) => resolve({ result, savedRunId }), onError: (error) => reject(new Error(error.message)),
      });
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    signals.emit('SIGTERM');
    const { result, savedRunId } = await done;
    expect(result.stopReason).toBe('cancelled');
    expect(readdirSync(join(root, 'runs'))).toEqual([`${savedRunId}.json`]);
    await vi.waitFor(() => expect(quits).toHaveLength(2)); // the held quit, then the one that goes through
  });
});
