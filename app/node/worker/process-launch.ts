import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { disableOrtTelemetry } from './ort-telemetry.js';
import type { WorkerData, WorkerEntry, WorkerLaunchOptions } from './worker-launch.js';
import type { WorkerEvents, WorkerTransport } from './worker-transport.js';

/**
 * The worker's entry file, whichever form this module runs in: built, out/node/workers/<entry>.js
 * (or the host's own `workerEntry`); from source (tsx, vitest), the .ts entry, which the child loads
 * through tsx's loader (`--import`, resolved here so it works from any working directory).
 */
export function processEntry(entryName: WorkerEntry, options: WorkerLaunchOptions): { path: string; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = options.workerEntry ?? new URL(`../../../workers/${entryName}.${fromSource ? 'ts' : 'js'}`, import.meta.url);
  const path = fileURLToPath(entry);
  return { path, execArgv: path.endsWith('.ts') ? ['--import', import.meta.resolve('tsx')] : [] };
}

/**
 * Where a process worker finds its workerData (workers/parent-channel.ts reads and removes it): the
 * environment, which Node's fork and Electron's utilityProcess both pass as given (Chromium may
 * reorder a utility process's `--` arguments).
 */
export const WORKER_DATA_VARIABLE = 'KVSCOPE_WORKER_DATA';

/**
 * A process worker's environment: the host's, with its workerData, and NODE_OPTIONS without the
 * inspector's flags (a host run under a debugger would give every job process the same inspector
 * port, and the second would fail to start).
 */
export function workerProcessEnv(options: WorkerLaunchOptions, hostEnv: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const data: WorkerData = options.engineModule !== undefined ? { engineModule: options.engineModule } : {};
  const env: NodeJS.ProcessEnv = { ...hostEnv, [WORKER_DATA_VARIABLE]: JSON.stringify(data) };
  const nodeOptions = childNodeOptions(hostEnv['NODE_OPTIONS']);
  if (nodeOptions === undefined) delete env['NODE_OPTIONS'];
  else env['NODE_OPTIONS'] = nodeOptions;
  return env;
}

export function childNodeOptions(nodeOptions: string | undefined): string | undefined {
  if (nodeOptions === undefined) return undefined;
  const kept = nodeOptions.split(/\s+/).filter((option) => option !== '' && !/^--inspect(-brk|-port|-wait)?(=|$)/.test(option));
  return kept.length === 0 ? undefined : kept.join(' ');
}

/**
 * The process launcher for Node hosts (the CLI, serve): `workers/<entry>` in a child process of its
 * own, so that it maps the model's external data once (Linux counts a file page in RSS once per
 * mapping: two sessions in one process read 1.84× a plain loop's max RSS on the same page-cache
 * pages) and can be killed mid-session.run without harm (terminating a thread there aborts the whole
 * process natively). Messages go by structured clone (`serialization: 'advanced'`: typed arrays
 * survive). The child gets no execArgv of the host's (its `--inspect`, its loaders) but tsx's when
 * it runs from source; no stdin (the host may read it); its stdout goes to the host's stderr (the
 * host's stdout carries results). It ignores SIGINT and SIGTERM, which a terminal or `timeout` sends
 * to the whole process group: the host coordinates the stop (cancel at the next window), and
 * `terminate` is SIGKILL.
 */
export function launchProcess(entryName: WorkerEntry, options: WorkerLaunchOptions, events: WorkerEvents): WorkerTransport {
  // Inherited by the child: its ORT environment skips the telemetry client (ort-telemetry.ts).
  disableOrtTelemetry();
  const { path, execArgv } = processEntry(entryName, options);
  const child = fork(path, [], {
    execArgv,
    env: workerProcessEnv(options),
    serialization: 'advanced',
    stdio: ['ignore', process.stderr.fd, 'inherit', 'ipc'],
  });
  let ended = false;
  const end = (code: number | null, signal: NodeJS.Signals | null): void => {
    if (ended) return;
    ended = true;
    events.exit({ code, signal });
  };
  child.on('message', (raw: unknown) => events.message(raw));
  child.on('error', (error: Error) => {
    // A process that never started emits no exit: say it ended, after the reason.
    if (child.pid === undefined) {
      events.error(error);
      end(null, null);
      return;
    }
    // Sending to a process that is going away fails the same way; its exit says what happened.
    if ((error as { code?: unknown }).code === 'ERR_IPC_CHANNEL_CLOSED' || (error as { code?: unknown }).code === 'EPIPE') return;
    events.error(error);
  });
  // 'close', not 'exit': it comes after the IPC channel closed, so every message the child sent has been delivered.
  child.once('close', (code, signal) => end(code, signal));
  return {
    kind: 'process',
    get pid() {
      return child.pid;
    },
    postMessage: (message) => {
      if (!child.connected) return; // gone: its exit event tells the supervisor
      child.send(message as Parameters<typeof child.send>[0], (error) => {
        if (error !== null && child.connected) events.error(error);
      });
    },
    terminate: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
