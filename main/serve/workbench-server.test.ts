import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ApiError } from '../../app/protocol/api-error.js';
import { createWorkbenchBackend, type WorkbenchBackend } from '../../app/node/workbench/workbench-backend.js';
import { storiesDir, storiesSettings } from '../../app/node/test-support/stories.js';
import type { GenerationResult } from '../../app/engine/generation-result.js';
import { createWebSocketApi, type WebSocketConstructor } from '../../renderer/api/websocket-api.js';
import { startWorkbenchServer, type WorkbenchServer } from './workbench-server.js';

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A raw request: `fetch` would normalise `..` in the path before sending it, which is what is tested here. */
function get(port: number, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => void (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The status line an upgrade request gets: 101 when accepted, else the refusal. */
function upgradeStatus(port: number, path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1', port, path,
      headers: {
        host: `127.0.0.1:${port}`, connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('kvscope serve', () => {
  let root: string;
  let backend: WorkbenchBackend;
  let server: WorkbenchServer;
  const token = 'test-token-0123456789abcdef';

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'kvscope-serve-'));
    const renderer = join(root, 'renderer');
    mkdirSync(join(renderer, 'assets'), { recursive: true });
    writeFileSync(join(renderer, 'index.html'), '<!doctype html><title>kvscope</title><script type="module" src="./assets/app.js"></script>');
    writeFileSync(join(renderer, 'assets', 'app.js'), 'console.log("app");');
    writeFileSync(join(renderer, 'assets', 'app.css'), 'body{}');
    writeFileSync(join(root, 'secret.txt'), 'SECRET');
    symlinkSync(join(root, 'secret.txt'), join(renderer, 'assets', 'link.txt'));
    backend = createWorkbenchBackend({ dataDir: join(root, 'data'), kvscopeVersion: '0.1.0-test' });
    server = await startWorkbenchServer({ backend, rendererDir: renderer, port: 0, token });
  });
  afterAll(async () => {
    await server.close();
    await backend.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  it('listens on 127.0.0.1 and prints a URL with the token', () => {
    expect(server.host).toBe('127.0.0.1');
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${token}`);
  });

  it('refuses the page without the token (401) and serves it with one, under a strict CSP', async () => {
    expect((await get(server.port, '/')).status).toBe(401);
    expect((await get(server.port, '/?token=wrong')).status).toBe(401);
    const page = await get(server.port, `/?token=${token}`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = page.headers['content-security-policy'] as string;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    expect(csp).toContain(`connect-src 'self' ws://127.0.0.1:${server.port}`);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['set-cookie']?.[0]).toMatch(new RegExp(`^kvscope-token-${server.port}=${token}; HttpOnly; SameSite=Strict`));
  });

  it('serves assets with their MIME types to a page holding the cookie', async () => {
    const cookie = { cookie: `kvscope-token-${server.port}=${token}` };
    const script = await get(server.port, '/assets/app.js', cookie);
    expect(script).toMatchObject({ status: 200, body: 'console.log("app");' });
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await get(server.port, '/assets/app.css', cookie)).headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await get(server.port, '/assets/missing.js', cookie)).status).toBe(404);
    expect((await get(server.port, '/favicon.ico', cookie)).status).toBe(204);
    expect((await get(server.port, '/assets/app.js', { cookie: `kvscope-token-${server.port}=nope` })).status).toBe(401);
  });

  it('refuses paths that climb out of the renderer folder', async () => {
    for (const path of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt', '/assets/%2e%2e%5c..%5csecret.txt', '/..%5csecret.txt', '/assets/link.txt', '/%00']) {
      const answer = await get(server.port, `${path}${path.includes('?') ? '&' : '?'}token=${token}`);
      expect(answer.status, path).toBe(404);
      expect(answer.body, path).not.toContain('SECRET');
    }
  });

  it('blocks DNS rebinding (foreign Host) and foreign origins with 403', async () => {
    expect((await get(server.port, `/?token=${token}`, { host: `attacker.example:${server.port}` })).status).toBe(403);
    expect((await get(server.port, `/?token=${token}`, { host: `127.0.0.1:${server.port + 1}` })).status).toBe(403);
    expect((await get(server.port, `/?token=${token}`, { host: `localhost:${server.port}` })).status).toBe(200);
    expect((await get(server.port, `/?token=${token}`, { origin: 'http://attacker.example' })).status).toBe(403);
    expect((await upgradeStatus(server.port, `/api?token=${token}`, { origin: 'http://attacker.example' }))).toBe(403);
    expect((await upgradeStatus(server.port, `/api?token=${token}`, { host: `rebound.example:${server.port}` }))).toBe(403);
  });

  it('requires the token on the WebSocket upgrade: 401 without, 101 with', async () => {
    expect(await upgradeStatus(server.port, '/api')).toBe(401);
    expect(await upgradeStatus(server.port, '/api?token=nope')).toBe(401);
    expect(await upgradeStatus(server.port, `/api?token=${token}`)).toBe(101);
    expect(await upgradeStatus(server.port, '/api', { cookie: `kvscope-token-${server.port}=${token}`, origin: `http://127.0.0.1:${server.port}` })).toBe(101);
    expect(await upgradeStatus(server.port, `/elsewhere?token=${token}`)).toBe(404);
  });

  it('refuses other methods', async () => {
    const answer = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: server.port, path: `/?token=${token}`, method: 'POST' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('x');
    });
    expect(answer).toBe(405);
  });

  it('answers malformed requests with invalid-request errors', async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}/api?token=${token}`);
    await new Promise((resolve) => socket.once('open', resolve));
    const replies: unknown[] = [];
    socket.on('message', (data) => replies.push(JSON.parse(String(data))));
    socket.send('not json');
    socket.send(JSON.stringify({ type: 'load-run', id: 7, runId: '../../etc/passwd' }));
    socket.send(JSON.stringify({ type: 'format-disk', id: 8 }));
    await expect.poll(() => replies.length).toBe(3);
    socket.close();
    expect(replies).toEqual(expect.arrayContaining([
      expect.objectContaining({ type: 'error', id: 0, error: expect.objectContaining({ code: 'invalid-request' }) }),
      { type: 'error', id: 7, error: { code: 'invalid-request', message: expect.stringMatching(/runId: expected a run id/) } },
      { type: 'error', id: 8, error: { code: 'invalid-request', message: 'Unsupported request type "format-disk".' } },
    ]));
  });

  it('carries the whole API over a real WebSocket with the renderer client', async () => {
    const api = createWebSocketApi(`ws://127.0.0.1:${server.port}/api`, token, { WebSocket: WebSocket as unknown as WebSocketConstructor });
    try {
      expect(api.host).toBe('browser');
      expect((await api.environment()).kvscopeVersion).toBe('0.1.0-test');
      const summary = await api.openModel({ kind: 'folder', path: storiesDir() });
      expect(summary).toMatchObject({ ok: true, displayName: 'stories260k' });
      expect(await api.recentModels()).toEqual([{ kind: 'folder', path: storiesDir() }]);
      expect(await api.pickModelFolder()).toBeNull();
      expect(await api.listRuns()).toEqual([]);
      const missing = await api.loadRun('20000101-000000-000000').catch((error: unknown) => error);
      expect(missing).toBeInstanceOf(ApiError);
      expect(missing).toMatchObject({ code: 'invalid-input', message: expect.stringMatching(/does not exist/) });

      let text = '';
      let steps = 0;
      const done = new Promise<{ result: GenerationResult; savedRunId: string | null }>((resolve, reject) => {
        void api.startRun(storiesSettings({ maxNewTokens: 4 }), {
          onText: (delta) => void (text += delta),
          onMetrics: (batch) => void (steps += batch.length),
          onDone: (result, savedRunId) => resolve({ result, savedRunId }),
          onError: (error) => reject(new Error(error.message)),
        }).then((ticket) => expect(ticket.runId).toMatch(/^\d{8}-\d{6}-[0-9a-f]{6}$/));
      });
      const { result, savedRunId } = await done;
      expect(result.generatedTokenIds).toHaveLength(4);
      expect(steps).toBe(4);
      expect(text).toBe(result.text);
      expect(savedRunId).not.toBeNull();
      const record = await api.loadRun(savedRunId!);
      expect(record.generatedTokenIds).toEqual(result.generatedTokenIds);
      expect((await api.listRuns()).map((run) => run.id)).toEqual([savedRunId]);
      const csv = await api.exportRun(savedRunId!, 'csv');
      expect(csv.content.split('\n')[0]).toMatch(/^step,token_id,/);
      await api.deleteRun(savedRunId!);
      expect(await api.listRuns()).toEqual([]);
    } finally {
      api.close();
    }
  });

  it('fails a client with a wrong token clearly', async () => {
    const api = createWebSocketApi(`ws://127.0.0.1:${server.port}/api`, 'wrong', { WebSocket: WebSocket as unknown as WebSocketConstructor });
    await expect(api.environment()).rejects.toMatchObject({ code: 'unauthorized', fix: expect.stringMatching(/token/) });
  });
});
