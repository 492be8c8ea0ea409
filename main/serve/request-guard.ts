import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { tokensMatch } from './access-token.js';

/**
 * The checks every request to the serve host passes, in order:
 * 1. Host: a DNS rebinding attack reaches 127.0.0.1 under the attacker's own name, so the Host
 *    header must be a name that cannot be rebound (localhost, an IP literal, or the --host given)
 *    with our port. Fails with 403.
 * 2. Origin (when a browser sends one): the page must come from this same server. Fails with 403.
 * 3. The per-launch token, from `?token=` or the cookie the page was served with. Fails with 401.
 */
export type GuardVerdict = { readonly ok: true } | { readonly ok: false; readonly status: 401 | 403; readonly reason: string };

export interface GuardOptions {
  readonly token: string;
  readonly port: number;
  /** the --host the server was bound to (a name given there is trusted as a Host header) */
  readonly boundHost: string;
}

export function tokenCookieName(port: number): string {
  // Cookies ignore ports: name it per port so two servers on one machine keep their own tokens.
  return `kvscope-token-${port}`;
}

export function checkRequest(request: IncomingMessage, options: GuardOptions): GuardVerdict {
  const host = request.headers.host;
  if (host === undefined || !isAllowedHost(host, options)) {
    return { ok: false, status: 403, reason: `Host ${JSON.stringify(host ?? '')} is not this server (DNS rebinding protection).` };
  }
  const origin = request.headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== `http://${host.toLowerCase()}`) {
    return { ok: false, status: 403, reason: `Origin ${JSON.stringify(origin)} is not this server.` };
  }
  if (!tokensMatch(options.token, requestToken(request, options.port))) {
    return { ok: false, status: 401, reason: 'Missing or wrong token: open the URL that kvscope serve printed (with ?token=…).' };
  }
  return { ok: true };
}

export function isAllowedHost(hostHeader: string, options: Pick<GuardOptions, 'port' | 'boundHost'>): boolean {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d+)$/.exec(hostHeader.trim());
  if (match === null) return false;
  const [, name, port] = match as unknown as [string, string, string];
  if (Number(port) !== options.port) return false;
  const bare = name.startsWith('[') ? name.slice(1, -1) : name;
  const lower = bare.toLowerCase();
  return lower === 'localhost' || isIP(bare) !== 0 || lower === options.boundHost.toLowerCase();
}

/** The token of a request: the query's `token`, else this port's cookie. */
export function requestToken(request: IncomingMessage, port: number): string | undefined {
  const query = new URL(request.url ?? '/', 'http://placeholder').searchParams.get('token');
  if (query !== null) return query;
  const name = tokenCookieName(port);
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}
