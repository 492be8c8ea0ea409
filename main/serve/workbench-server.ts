import { createReadStream } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { createApiSession, HEADLESS_HOST } from '../../app/node/workbench/api-session.js';
import type { WorkbenchBackend } from '../../app/node/workbench/workbench-backend.js';
import { MAX_API_MESSAGE_BYTES } from '../../app/protocol/api-limits.js';
import { stringifyJson } from '../../app/protocol/json-numbers.js';
import { NO_REQUEST } from '../../app/protocol/messages.js';
import { createAccessToken } from './access-token.js';
import { contentSecurityPolicy } from './content-security-policy.js';
import { checkRequest, tokenCookieName, type GuardOptions } from './request-guard.js';
import { mimeTypeOf, resolveStaticPath } from './static-files.js';

export const DEFAULT_SERVE_HOST = '127.0.0.1';
export const DEFAULT_SERVE_PORT = 4310;
/** The WebSocket endpoint. */
export const API_PATH = '/api';
/**
 * The largest WebSocket message accepted (app/protocol/api-limits.ts, 32 MiB: a start-run with a
 * long prompt fits). A bigger one closes that socket with 1009 (Message Too Big), which the page's
 * client reports as such; the server and the other connections carry on.
 */
export const MAX_MESSAGE_BYTES = MAX_API_MESSAGE_BYTES;

export interface WorkbenchServerOptions {
  readonly backend: WorkbenchBackend;
  /** the built renderer (index.html and assets) */
  readonly rendererDir: string;
  /** default 127.0.0.1: only this machine */
  readonly host?: string;
  /** default 4310; 0 picks a free port */
  readonly port?: number;
  /** default: a new random token per launch */
  readonly token?: string;
  /** where a dropped connection's reason goes (default: stderr) */
  readonly log?: (line: string) => void;
}

export interface WorkbenchServer {
  /** the page to open, token included */
  readonly url: string;
  readonly origin: string;
  readonly host: string;
  readonly port: number;
  readonly token: string;
  /** Closes every connection (stopping their runs) and the server; the backend stays the caller's. */
  close(): Promise<void>;
}

/**
 * `kvscope serve`: the built renderer over HTTP and the WorkbenchApi over a WebSocket at /api, on
 * 127.0.0.1 by default. Every request, page and upgrade alike, must pass request-guard.ts (Host and
 * Origin against DNS rebinding and other sites, then the per-launch token); the page answers with a
 * strict CSP and sets the token as an HttpOnly cookie so its own assets and socket need no query.
 */
export async function startWorkbenchServer(options: WorkbenchServerOptions): Promise<WorkbenchServer> {
  const host = options.host ?? DEFAULT_SERVE_HOST;
  const token = options.token ?? createAccessToken();
  const guard: { options: GuardOptions | undefined } = { options: undefined };
  const sockets = new Set<WebSocket>();
  const log = options.log ?? ((line: string) => console.error(line));
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES, perMessageDeflate: false });
  // The server socket itself (not a client's) failing after listen is logged; it must not throw.
  wss.on('error', (error) => log(`kvscope serve: WebSocket server error: ${error.message}`));

  const server = createServer((request, response) => {
    if (guard.options === undefined) return void refuse(response, 503, 'Starting up.');
    serveHttp(request, response, options.rendererDir, guard.options);
  });
  // A client that resets its connection mid-request is its own loss, never an uncaught 'error'.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (socket.writable && error.code !== 'ECONNRESET') socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const path = new URL(request.url ?? '/', 'http://placeholder').pathname;
    const verdict = guard.options === undefined ? { ok: false as const, status: 403 as const, reason: 'Starting up.' } : checkRequest(request, guard.options);
    if (path !== API_PATH || !verdict.ok) {
      const status = verdict.ok ? 404 : verdict.status;
      const reason = verdict.ok ? `No WebSocket endpoint at ${path}; it is ${API_PATH}.` : verdict.reason;
      socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${reason}\n`);
      return;
    }
    wss.handleUpgrade(request, socket, head, (client) => {
      sockets.add(client);
      attachSession(client, options.backend, log);
      client.once('close', () => sockets.delete(client));
    });
  });

  const port = await listen(server, host, options.port ?? DEFAULT_SERVE_PORT);
  guard.options = { token, port, boundHost: host };
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url: `${origin}/?token=${token}`,
    origin,
    host,
    port,
    token,
    async close() {
      for (const client of sockets) client.terminate();
      wss.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}

/**
 * One connection's session. Whatever the client sends (a frame too big, invalid UTF-8, an unmasked
 * frame, an unknown opcode, a reset) ends at most this connection: ws reports it as an 'error' on
 * this socket and closes it with the matching code (1009, 1007, 1002); the reason is logged and the
 * session disposed, which cancels this connection's runs (they are saved as cancelled).
 */
function attachSession(client: WebSocket, backend: WorkbenchBackend, log: (line: string) => void): void {
  const session = createApiSession(backend, HEADLESS_HOST, (event) => {
    if (client.readyState === client.OPEN) client.send(stringifyJson(event));
  });
  client.on('error', (error: Error & { code?: string }) => {
    log(`kvscope serve: closed a connection: ${describeSocketError(error)}`);
    // ws has sent its close frame; a peer that never answers it is cut off rather than waited for.
    setTimeout(() => client.terminate(), 1000).unref();
  });
  client.on('message', (data: RawData, isBinary: boolean) => {
    let raw: unknown;
    try {
      if (isBinary) throw new Error('binary frames are not part of the protocol');
      raw = JSON.parse(rawText(data));
    } catch (error) {
      client.send(stringifyJson({ type: 'error', id: NO_REQUEST, error: { code: 'invalid-request', message: `Not a JSON request: ${(error as Error).message}` } }));
      return;
    }
    void session.handle(raw).then((response) => {
      if (client.readyState === client.OPEN) client.send(stringifyJson(response));
    }).catch((error: unknown) => log(`kvscope serve: could not answer a request: ${(error as Error).message}`));
  });
  client.once('close', () => session.dispose());
}

function describeSocketError(error: Error & { code?: string }): string {
  if (error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
    return `a message larger than ${MAX_MESSAGE_BYTES / (1024 * 1024)} MiB, the most this server takes (closed with 1009, Message Too Big)`;
  }
  return `${error.message}${error.code !== undefined ? ` (${error.code})` : ''}`;
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'OK', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 503: 'Service Unavailable',
};

/** Headers on every answer: nothing cached (token-protected), no referrer leaking the token, no framing. */
function baseHeaders(): Record<string, string> {
  return {
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
  };
}

function serveHttp(request: IncomingMessage, response: ServerResponse, rendererDir: string, guard: GuardOptions): void {
  const verdict = checkRequest(request, guard);
  if (!verdict.ok) return void refuse(response, verdict.status, verdict.reason);
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.setHeader('Allow', 'GET, HEAD');
    return void refuse(response, 405, `${request.method ?? ''} is not allowed; this server only serves the workbench's files.`);
  }
  const url = new URL(request.url ?? '/', 'http://placeholder');
  const file = resolveStaticPath(rendererDir, url.pathname);
  if (file === null) {
    if (url.pathname === '/' || url.pathname === '/index.html') return void notBuilt(response, rendererDir);
    // Browsers ask for it unprompted; a 404 would be a console error in every page (and e2e log).
    if (url.pathname === '/favicon.ico') return void response.writeHead(204, baseHeaders()).end();
    return void refuse(response, 404, `${url.pathname} is not part of the workbench.`);
  }
  const headers: Record<string, string> = {
    ...baseHeaders(),
    'Content-Type': mimeTypeOf(file),
    // Only the page and its assets: the socket is ws://<the Host this page was loaded from>.
    'Content-Security-Policy': contentSecurityPolicy([`ws://${request.headers.host ?? ''}`]),
  };
  response.writeHead(200, {
    ...headers,
    'Set-Cookie': `${tokenCookieName(guard.port)}=${guard.token}; HttpOnly; SameSite=Strict; Path=/`,
  });
  if (request.method === 'HEAD') return void response.end();
  createReadStream(file).on('error', () => response.destroy()).pipe(response);
}

function refuse(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { ...baseHeaders(), 'Content-Type': 'text/plain; charset=utf-8', 'Content-Security-Policy': contentSecurityPolicy() });
  response.end(`${status} ${STATUS_TEXT[status] ?? ''}: ${message}\n`);
}

/** Before the first build there is no page; say how to get one instead of a bare 404. */
function notBuilt(response: ServerResponse, rendererDir: string): void {
  response.writeHead(503, { ...baseHeaders(), 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': contentSecurityPolicy() });
  response.end(`<!doctype html><meta charset="utf-8"><title>kvscope</title>
<h1>kvscope: the workbench UI is not built</h1>
<p>No <code>index.html</code> in <code>${escapeHtml(rendererDir)}</code>. Run <code>npm run build</code> (or <code>npm run build:web</code>) and reload.</p>\n`);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
