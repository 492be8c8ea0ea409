import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { registerAppScheme, serveAppFile } from './app-protocol.js';

vi.mock('electron', () => ({}));

describe('the kvscope:// app protocol', () => {
  const root = mkdtempSync(join(tmpdir(), 'kvscope-protocol-'));
  const renderer = join(root, 'renderer');
  mkdirSync(join(renderer, 'assets'), { recursive: true });
  writeFileSync(join(renderer, 'index.html'), '<!doctype html>');
  writeFileSync(join(renderer, 'assets', 'app.js'), '1');
  writeFileSync(join(root, 'secret.txt'), 'SECRET');
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('registers a standard, secure scheme', () => {
    const protocol = { registerSchemesAsPrivileged: vi.fn() };
    registerAppScheme(protocol);
    expect(protocol.registerSchemesAsPrivileged).toHaveBeenCalledWith([{ scheme: 'kvscope', privileges: { standard: true, secure: true, supportFetchAPI: true } }]);
  });

  it('serves the renderer with its MIME type and the CSP', async () => {
    const page = await serveAppFile('kvscope://app/index.html', renderer);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'; .*connect-src 'self';.*object-src 'none'/);
    expect((await serveAppFile('kvscope://app/assets/app.js', renderer)).headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  });

  it('refuses other hosts and paths out of the renderer', async () => {
    expect((await serveAppFile('kvscope://other/index.html', renderer)).status).toBe(404);
    for (const url of ['kvscope://app/%2e%2e/secret.txt', 'kvscope://app/assets/..%2f..%2fsecret.txt', 'kvscope://app/missing.js']) {
      const answer = await serveAppFile(url, renderer);
      expect(answer.status, url).toBe(404);
      expect(await answer.text()).not.toContain('SECRET');
    }
  });
});
