import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { ExitCode, UsageError, type CliIo } from '../../app/cli/io.js';
import { defaultDataDir } from '../../app/node/workbench/data-dir.js';
import { createWorkbenchBackend } from '../../app/node/workbench/workbench-backend.js';
import { defaultRunLimits, parseMaxRuns } from '../../app/node/workbench/run-limit.js';
import { KVSCOPE_VERSION } from '../../app/version.js';
import { defaultRendererDir } from './renderer-dir.js';
import { DEFAULT_SERVE_HOST, DEFAULT_SERVE_PORT, startWorkbenchServer, type WorkbenchServer } from './workbench-server.js';

export interface ServeRuntime {
  readonly rendererDir: string;
  readonly dataDir: string;
  /** a fixed access token (KVSCOPE_SERVE_TOKEN) instead of a new one per launch */
  readonly token?: string;
  /** resolves when the server should stop (Ctrl-C, SIGTERM) */
  waitForStop(server: WorkbenchServer): Promise<void>;
}

/** The environment variable that fixes the token, so that a bookmarked URL survives a restart. */
export const SERVE_TOKEN_VARIABLE = 'KVSCOPE_SERVE_TOKEN';

export function nodeServeRuntime(): ServeRuntime {
  const token = process.env[SERVE_TOKEN_VARIABLE];
  return {
    rendererDir: defaultRendererDir(),
    dataDir: defaultDataDir(),
    ...(token !== undefined && token !== '' ? { token } : {}),
    waitForStop: () => new Promise((resolve) => {
      // The first signal stops gracefully (runs cancelled and saved). Later ones only say so: exiting
      // while a worker's onnxruntime session.run is in flight aborts the process natively (Napi::Error,
      // SIGABRT; 2 of 4 trials here) and loses the runs. A worker stuck in one step is terminated by
      // its cancel timeout; SIGKILL still stops at once.
      const stop = (): void => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        let told = false;
        const again = (signal: NodeJS.Signals): void => {
          if (told) return;
          told = true;
          process.stderr.write(`kvscope serve: ${signal} again: already stopping; runs in flight end at their next step and are saved as cancelled (SIGKILL stops at once).\n`);
        };
        process.on('SIGINT', again);
        process.on('SIGTERM', again);
        resolve();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    }),
  };
}

/**
 * `kvscope serve [--port N] [--host H] [--data-dir D]`: the workbench in a browser. Prints the URL
 * (with its per-launch token, or the fixed one of KVSCOPE_SERVE_TOKEN) and serves until Ctrl-C;
 * the runs it saves are the desktop app's too.
 */
export async function runServeCommand(options: Record<string, string | boolean | undefined>, io: CliIo, runtime: ServeRuntime = nodeServeRuntime()): Promise<ExitCode> {
  const port = parsePort(options['port']);
  if (runtime.token !== undefined) checkFixedToken(runtime.token);
  const host = typeof options['host'] === 'string' ? options['host'] : DEFAULT_SERVE_HOST;
  const dataDir = typeof options['data-dir'] === 'string' ? options['data-dir'] : runtime.dataDir;
  const maxRuns = typeof options['max-runs'] === 'string' ? parseMaxRunsOption(options['max-runs']) : undefined;
  const backend = createWorkbenchBackend({ dataDir, kvscopeVersion: KVSCOPE_VERSION, ...(maxRuns !== undefined ? { runLimits: { ...defaultRunLimits(), maxConcurrent: maxRuns } } : {}) });
  let server: WorkbenchServer;
  try {
    server = await startWorkbenchServer({ backend, rendererDir: runtime.rendererDir, host, port, ...(runtime.token !== undefined ? { token: runtime.token } : {}) });
  } catch (error) {
    await backend.dispose();
    throw listenError(error, host, port);
  }
  io.stdout(`kvscope serve: the workbench is at\n  ${server.url}\n`);
  io.stderr(`Runs are saved in ${join(backend.dataDir, 'runs')}. Ctrl-C stops the server.\n`);
  if (runtime.token !== undefined) io.stderr(`The token comes from ${SERVE_TOKEN_VARIABLE}: the URL stays the same at every launch.\n`);
  if (!existsSync(join(runtime.rendererDir, 'index.html'))) {
    io.stderr(`warning: the UI is not built (no ${join(runtime.rendererDir, 'index.html')}); run \`npm run build\` first. The API is up.\n`);
  }
  if (!isLoopback(host)) {
    io.stderr(`warning: listening on ${host}, reachable from other machines. The token guards it, but traffic is plain HTTP: use it on trusted networks only.\n`);
  }
  await runtime.waitForStop(server);
  io.stderr('kvscope serve: stopping: runs in flight are cancelled at their next step and saved as cancelled…\n');
  // Runs first, while the pages are still connected (they see each run end as cancelled), then the sockets.
  await backend.stopRuns();
  await server.close();
  await backend.dispose();
  io.stderr('kvscope serve: stopped.\n');
  return ExitCode.ok;
}

function parseMaxRunsOption(value: string): number {
  try {
    return parseMaxRuns(value, '--max-runs');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function parsePort(value: string | boolean | undefined): number {
  if (value === undefined || typeof value === 'boolean') return DEFAULT_SERVE_PORT;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new UsageError(`--port must be a port number from 0 to 65535 (0: any free port), got ${JSON.stringify(value)}.`);
  return port;
}

/**
 * A fixed token guards the workbench as the random one does only if it is as hard to guess: at
 * least 32 URL-safe characters (about 190 bits when random), so it also goes into the URL unescaped.
 */
function checkFixedToken(token: string): void {
  if (!/^[A-Za-z0-9_-]{32,}$/.test(token)) {
    throw new UsageError(
      `${SERVE_TOKEN_VARIABLE} must be at least 32 URL-safe characters (A-Z, a-z, 0-9, - and _), got ${token.length} characters` +
      `${/^[A-Za-z0-9_-]*$/.test(token) ? '' : ' with others among them'}. Generate one with ` +
      '`node -e "console.log(require(\'crypto\').randomBytes(32).toString(\'base64url\'))"`, or unset it for a new token per launch.',
    );
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

function listenError(error: unknown, host: string, port: number): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return new UsageError(`port ${port} on ${host} is already in use (another kvscope serve?). Choose another with --port N, or --port 0 for any free port.`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new UsageError(`cannot listen on ${host}: it is not an address of this machine. The default is ${DEFAULT_SERVE_HOST}.`);
  if (code === 'EACCES') return new UsageError(`not allowed to listen on port ${port}; ports below 1024 need privileges. Use the default ${DEFAULT_SERVE_PORT} or --port 0.`);
  return error as Error;
}
