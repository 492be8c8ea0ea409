import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../app/cli/io.js';
import { runCli } from '../cli/run-cli.js';
import { runServeCommand } from './serve-command.js';

function captureIo(): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: (text: string) => void (io.out += text),
    stderr: (text: string) => void (io.err += text),
  };
  return io as unknown as CliIo & { out: string; err: string };
}

describe('kvscope serve', () => {
  const root = mkdtempSync(join(tmpdir(), 'kvscope-serve-cmd-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('prints the URL with its token, serves until stopped, then exits 0', async () => {
    const io = captureIo();
    let status = 0;
    const code = await runServeCommand({ port: '0' }, io, {
      rendererDir: join(root, 'renderer'),
      dataDir: join(root, 'data'),
      waitForStop: async (server) => {
        status = (await fetch(server.url)).status;
      },
    });
    expect(code).toBe(0);
    expect(io.out).toMatch(/^kvscope serve: the workbench is at\n {2}http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}\n$/);
    // Not built here: the page says so (503) rather than 404.
    expect(status).toBe(503);
    expect(io.err).toContain('the UI is not built');
    expect(io.err).toContain(join(root, 'data', 'runs'));
  });

  it('keeps the token of KVSCOPE_SERVE_TOKEN across launches, and refuses a weak one', async () => {
    const token = 'kvscope-test-token-0123456789-abcdefghij';
    const statuses: number[] = [];
    for (let launch = 0; launch < 2; launch++) {
      const io = captureIo();
      await runServeCommand({ port: '0' }, io, {
        rendererDir: join(root, 'renderer'),
        dataDir: join(root, 'data'),
        token,
        waitForStop: async (server) => {
          expect(server.url).toMatch(new RegExp(`/\\?token=${token}$`));
          statuses.push((await fetch(server.url)).status, (await fetch(server.url.replace(token, `${token}x`))).status);
        },
      });
      expect(io.err).toContain('The token comes from KVSCOPE_SERVE_TOKEN');
    }
    expect(statuses).toEqual([503, 401, 503, 401]); // the right token passes the guard (the UI is not built here), a wrong one does not
    for (const weak of ['short', 'x'.repeat(31), `${'x'.repeat(32)}/`]) {
      await expect(runServeCommand({ port: '0' }, captureIo(), { rendererDir: root, dataDir: join(root, 'data'), token: weak, waitForStop: async () => undefined }))
        .rejects.toThrow(/KVSCOPE_SERVE_TOKEN must be at least 32 URL-safe characters/);
    }
  });

  it('explains a port in use and a bad port', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const io = captureIo();
      const code = await runCli(['serve', '--port', String(port), '--data-dir', join(root, 'data')], io);
      expect(code).toBe(1);
      expect(io.err).toMatch(new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use.*--port 0`));
    } finally {
      blocker.close();
    }
    const io = captureIo();
    expect(await runCli(['serve', '--port', 'http'], io)).toBe(1);
    expect(io.err).toMatch(/--port must be a port number/);
  });
});
