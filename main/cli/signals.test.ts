import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { GenerationResult } from '../../app/engine/generation-result.js';
import { hasShared } from '../../app/node/golden.js';
import { storiesDir, storiesSettings } from '../../app/node/test-support/stories.js';
import { parseRunRecord } from '../../app/record/parse-run-record.js';
import { createWebSocketApi, type WebSocketConstructor } from '../../renderer/api/websocket-api.js';
import { spawnCli } from './test-support/spawn-cli.js';

const root = mkdtempSync(join(tmpdir(), 'kvscope-signals-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(!hasShared())('signals: runs in flight are cancelled and saved as cancelled, then the process exits (issue 9, failure 7)', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`kvscope run on ${signal}: the record is written as cancelled and the exit code is 0`, async () => {
      const out = join(root, `run-${signal}.json`);
      const cli = spawnCli(['run', '--model', storiesDir(), '--cache', 'dynamic', '--max-new-tokens', '450', '--out', out]);
      await until(() => cli.output().stdout.length > 0, 'the first streamed text');
      cli.child.kill(signal);
      const outcome = await cli.done;
      expect(outcome.signal).toBeNull();
      expect(outcome.code).toBe(0);
      expect(outcome.stderr).toMatch(signal === 'SIGTERM' ? /SIGTERM: cancelling at the next step/ : /cancelling at the next step \(Ctrl-C again/);
      const record = parseRunRecord(readFileSync(out, 'utf8'), out);
      expect(record.stopReason).toBe('cancelled');
      expect(record.generatedTokenIds.length).toBeLessThan(450);
    });
  }

  it('kvscope serve on SIGTERM: the page sees its run end as cancelled, the record is saved, the server exits 0', async () => {
    const dataDir = join(root, 'serve-data');
    const serve = spawnCli(['serve', '--port', '0', '--data-dir', dataDir]);
    await until(() => /token=/.test(serve.output().stdout), 'the printed URL');
    const url = new URL(/http:\/\/\S+/.exec(serve.output().stdout)![0]);
    const api = createWebSocketApi(`ws://${url.host}/api`, url.searchParams.get('token')!, { WebSocket: WebSocket as unknown as WebSocketConstructor });
    let steps = 0;
    const ended = new Promise<{ result: GenerationResult; savedRunId: string | null }>((resolve, reject) => {
      void api.startRun(storiesSettings({ maxNewTokens: 450 }), {
        onText: () => undefined,
        onMetrics: (batch) => void (steps += batch.length),
        onDone: (result, savedRunId) => resolve({ result, savedRunId }),
        onError: (error) => reject(new Error(error.message)),
      });
    });
    await until(() => steps > 0, 'the first metrics');
    serve.child.kill('SIGTERM');
    const { result, savedRunId } = await ended;
    expect(result.stopReason).toBe('cancelled');
    expect(savedRunId).not.toBeNull();
    const outcome = await serve.done;
    api.close();
    expect(outcome.signal).toBeNull();
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toMatch(/stopping: runs in flight are cancelled at their next step and saved as cancelled/);
    const files = readdirSync(join(dataDir, 'runs'));
    expect(files).toEqual([`${savedRunId}.json`]);
    expect(parseRunRecord(readFileSync(join(dataDir, 'runs', files[0]!), 'utf8'), files[0]!).stopReason).toBe('cancelled');
  });
});
