import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { GenerationResult } from '../../app/engine/generation-result.js';
import { PROMPT_200_KB } from '../../app/node/test-support/long-prompt.js';
import { storiesSettings } from '../../app/node/test-support/stories.js';
import { createWorkbenchBackend, type WorkbenchBackend } from '../../app/node/workbench/workbench-backend.js';
import { ApiError } from '../../app/protocol/api-error.js';
import type { RunErrorPayload } from '../../app/protocol/messages.js';
import { parseRunRecord } from '../../app/record/parse-run-record.js';
import { createWebSocketApi, type WebSocketConstructor, type WebSocketWorkbenchApi } from '../../renderer/api/websocket-api.js';
import { openRawWebSocket } from './test-support/raw-websocket.js';
import { MAX_MESSAGE_BYTES, startWorkbenchServer, type WorkbenchServer } from './workbench-server.js';

const FAKE_ENGINE = new URL('../../workers/test-support/fake-engine.ts', import.meta.url).href;
const token = 'hostile-token-0123456789abcdefghijkl';

/** A run to its end through a client, with what the page would see. */
function runThrough(api: WebSocketWorkbenchApi, prompt: string): Promise<{ result: GenerationResult; savedRunId: string | null } | { error: RunErrorPayload }> {
  return new Promise((resolve, reject) => {
    api.startRun(storiesSettings({ prompt, maxNewTokens: 3 }), {
      onText: () => undefined,
      onMetrics: () => undefined,
      onDone: (result, savedRunId) => resolve({ result, savedRunId }),
      onError: (error) => resolve({ error }),
    }).catch(reject);
  });
}

describe('kvscope serve against hostile clients (issue 9, failure 1)', () => {
  let root: string;
  let backend: WorkbenchBackend;
  let server: WorkbenchServer;
  const logged: string[] = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'kvscope-hostile-'));
    backend = createWorkbenchBackend({ dataDir: join(root, 'data'), runOptions: { engineModule: FAKE_ENGINE } });
    server = await startWorkbenchServer({ backend, rendererDir: join(root, 'renderer'), port: 0, token, log: (line) => logged.push(line) });
  });
  afterAll(async () => {
    await server.close();
    await backend.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  const client = (): WebSocketWorkbenchApi => createWebSocketApi(`ws://127.0.0.1:${server.port}/api`, token, { WebSocket: WebSocket as unknown as WebSocketConstructor });

  /** The server still answers a new client after each attack. */
  async function stillAnswers(): Promise<void> {
    const api = client();
    try {
      expect((await api.environment()).kvscopeVersion).toMatch(/\d/);
    } finally {
      api.close();
    }
  }

  const attacks: readonly { name: string; frame: Parameters<Awaited<ReturnType<typeof openRawWebSocket>>['send']>[0]; code: number; logged: RegExp }[] = [
    { name: 'a message over the size limit (the header claims 33 MiB)', frame: { opcode: 0x1, claimedLength: MAX_MESSAGE_BYTES + 1 }, code: 1009, logged: /larger than 32 MiB.*1009/ },
    { name: 'an invalid UTF-8 text frame', frame: { opcode: 0x1, payload: Buffer.from([0x7b, 0xc3, 0x28, 0x7d]) }, code: 1007, logged: /UTF-8/i },
    { name: 'an unmasked frame', frame: { opcode: 0x1, payload: Buffer.from('{}'), masked: false }, code: 1002, logged: /MASK/ },
    { name: 'opcode 3 (reserved)', frame: { opcode: 0x3, payload: Buffer.from('x') }, code: 1002, logged: /opcode/i },
    { name: 'RSV bits without an extension', frame: { opcode: 0x1, payload: Buffer.from('{}'), rsv: 0b100 }, code: 1002, logged: /RSV/ },
    { name: 'a fragmented control frame', frame: { opcode: 0x9, payload: Buffer.from('ping'), fin: false }, code: 1002, logged: /FIN/ },
    { name: 'a continuation frame with nothing to continue', frame: { opcode: 0x0, payload: Buffer.from('x') }, code: 1002, logged: /continuation|opcode/i },
  ];

  for (const attack of attacks) {
    it(`survives ${attack.name}: that socket is closed with ${attack.code} and a logged reason`, async () => {
      const connection = await openRawWebSocket(server.port, token);
      const before = logged.length;
      connection.send(attack.frame);
      expect(await connection.closed).toBe(attack.code);
      await expect.poll(() => logged.slice(before).join('\n')).toMatch(attack.logged);
      await stillAnswers();
    });
  }

  it('survives a client that resets its connection in the middle of a frame and of the upgrade', async () => {
    const connection = await openRawWebSocket(server.port, token);
    connection.socket.write(Buffer.from([0x81, 0xfe, 0x10]));
    connection.socket.resetAndDestroy();
    const { connect } = await import('node:net');
    const half = connect(server.port, '127.0.0.1');
    half.on('error', () => undefined);
    await new Promise((resolve) => half.once('connect', resolve));
    half.write(`GET /api?token=${token} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nUpgrade: web`);
    half.resetAndDestroy();
    await stillAnswers();
  });

  it('carries a 200 KB prompt through a run and into its saved record (a 1.1 MB one too: the old limit was 1 MiB)', async () => {
    const api = client();
    try {
      for (const prompt of [PROMPT_200_KB, 'x'.repeat(1_100_000)]) {
        const outcome = await runThrough(api, prompt);
        if (!('result' in outcome)) throw new Error(outcome.error.message);
        expect(outcome.result.settings.prompt).toBe(prompt);
        expect(outcome.savedRunId).not.toBeNull();
        const record = await api.loadRun(outcome.savedRunId!);
        expect(record.settings.prompt).toHaveLength(prompt.length);
      }
    } finally {
      api.close();
    }
    const runs = readdirSync(join(root, 'data', 'runs'));
    for (const name of runs) expect(() => parseRunRecord(readFileSync(join(root, 'data', 'runs', name), 'utf8'), name)).not.toThrow();
  });

  it('refuses a request over the limit in the page\'s client, before sending it, and keeps the connection', async () => {
    const api = client();
    try {
      const refused = await runThrough(api, 'y'.repeat(MAX_MESSAGE_BYTES + 10)).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ApiError);
      expect(refused).toMatchObject({ code: 'invalid-input', message: expect.stringMatching(/start-run request is 32\.0 MiB; the kvscope server takes messages of at most 32 MiB/) });
      expect((await api.environment()).kvscopeVersion).toMatch(/\d/);
    } finally {
      api.close();
    }
  });
});
