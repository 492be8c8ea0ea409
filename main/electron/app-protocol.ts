import { readFile } from 'node:fs/promises';
import type { Protocol } from 'electron';
import { contentSecurityPolicy } from '../serve/content-security-policy.js';
import { mimeTypeOf, resolveStaticPath } from '../serve/static-files.js';
import { APP_HOST, APP_SCHEME } from './app-origin.js';

/**
 * Must run before `app.ready`. `standard` gives the scheme real URLs (relative assets resolve),
 * `secure` makes the page a secure context; no CORS or service workers are needed.
 */
export function registerAppScheme(protocol: Pick<Protocol, 'registerSchemesAsPrivileged'>): void {
  protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } }]);
}

/**
 * Serves the built renderer at kvscope://app/ with the same strict CSP as serve mode, and the same
 * path checks (no traversal, no symlink escape: main/serve/static-files.ts).
 */
export function handleAppProtocol(protocol: Pick<Protocol, 'handle'>, rendererDir: string): void {
  protocol.handle(APP_SCHEME, (request) => serveAppFile(request.url, rendererDir));
}

export async function serveAppFile(url: string, rendererDir: string): Promise<Response> {
  const parsed = new URL(url);
  const headers = { 'Content-Security-Policy': contentSecurityPolicy(), 'X-Content-Type-Options': 'nosniff' };
  if (parsed.host !== APP_HOST) return new Response('Not found', { status: 404, headers });
  const file = resolveStaticPath(rendererDir, parsed.pathname);
  if (file === null) return new Response(`${parsed.pathname} is not part of the workbench.`, { status: 404, headers });
  return new Response(await readFile(file), { status: 200, headers: { ...headers, 'Content-Type': mimeTypeOf(file) } });
}
