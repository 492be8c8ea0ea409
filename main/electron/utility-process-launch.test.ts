import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../app/cache/cache-config.js';
import { LAB_PROTOCOL_VERSION, type LabHostMessage } from '../../app/lab/lab-protocol.js';
import { defaultWindowSettings, type EvalSettings } from '../../app/lab/eval-settings.js';
import { LabWorker, liveLabWorkers } from '../../app/node/lab/lab-worker-client.js';
import { RunError } from '../../app/protocol/run-error.js';

// A stand-in `electron` (no binary runs here): utilityProcess.fork records what it was given and
// returns a child the test speaks for, as the lab worker entry would through process.parentPort.
class FakeChild extends EventEmitter {
  pid: number | undefined = undefined;
  readonly posted: unknown[] = [];
  kills = 0;
  postMessage(message: unknown): void {
    this.posted.push(message);
  }
  kill(): boolean {
    this.kills++;
    // as Electron: the process ends on SIGTERM, is reaped, and `exit` follows with the code the wait saw
    setTimeout(() => this.emit('exit', 143), 1);
    return true;
  }
  spawn(pid: number): void {
    this.pid = pid;
    this.emit('spawn');
  }
}

interface Fork {
  readonly modulePath: string;
  readonly args: string[];
  readonly options: { env?: Record<string, string | undefined>; serviceName?: string; stdio?: unknown };
  readonly child: FakeChild;
}
const forks: Fork[] = [];
const utilityProcess = {
  fork: (modulePath: string, args: string[], options: Fork['options']): FakeChild => {
    const child = new FakeChild();
    forks.push({ modulePath, args, options, child });
    return child;
  },
};
// Called when the launcher module below first imports `electron`, after the stand-in exists.
vi.mock('electron', () => ({ utilityProcess }));

const { utilityProcessLauncher } = await import('./utility-process-launch.js');

const ENTRY = new URL('file:///app/out/node/workers/lab-worker.js');

function settings(name: string): EvalSettings {
  return {
    model: '/models/fake', executionProvider: 'cpu', cacheMode: 'dynamic', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS,
    text: { name, content: 'fake' }, windows: { ...defaultWindowSettings(), maxWindows: 3 },
  };
}

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

const workers: LabWorker[] = [];
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.dispose();
  forks.splice(0);
  expect(liveLabWorkers()).toBe(0);
});

function labWorker(): LabWorker {
  const worker = new LabWorker({ engineModule: 'file:///engine.js', launcher: utilityProcessLauncher(ENTRY) });
  workers.push(worker);
  return worker;
}

describe('a lab worker in Electron\'s utilityProcess (a Lab sweep\'s job: the main process cannot fork Node)', () => {
  it('forks the built lab worker entry with its workerData in the environment, and runs a job over the parent port', async () => {
    const worker = labWorker();
    const job = worker.reference(settings('windows-0'), { sweepJobs: 2 });
    expect(forks).toHaveLength(1);
    const [{ modulePath, args, options, child }] = forks as [Fork];
    expect(modulePath).toBe('/app/out/node/workers/lab-worker.js');
    expect(args).toEqual([]);
    expect(options.env?.['KVSCOPE_WORKER_DATA']).toBe('{"engineModule":"file:///engine.js"}');
    expect(options.serviceName).toBe('kvscope lab-worker');
    child.spawn(4242);
    const request = child.posted[0] as Extract<LabHostMessage, { type: 'reference' }>;
    expect(request).toMatchObject({ type: 'reference', options: { sweepJobs: 2 } });
    child.emit('message', { type: 'ready', protocolVersion: LAB_PROTOCOL_VERSION });
    child.emit('message', { type: 'referenced', id: request.id, reference: { key: 'k', cached: true, ms: 1, windowsComputed: 0 } });
    expect(await job.done).toEqual({ key: 'k', cached: true, ms: 1, windowsComputed: 0 });
  });

  it('a utility process that exits mid-job fails the job, naming the process and its exit code', async () => {
    const worker = labWorker();
    const job = worker.reference(settings('windows-0'));
    const { child } = forks[0]!;
    child.spawn(4243);
    child.emit('exit', 137);
    const error = await job.done.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(RunError);
    expect(error).toMatchObject({ code: 'worker-crashed', message: 'The lab worker (process 4243) exited with code 137 before its job finished.' });
  });

  it('terminates (dispose) with kill(), and only once the process has spawned', async () => {
    const worker = labWorker();
    void worker.reference(settings('windows-0')).done.catch(() => undefined);
    const { child } = forks[0]!;
    const disposed = worker.dispose();
    await tick();
    expect(child.kills).toBe(0);
    child.spawn(4244);
    await disposed;
    expect(child.kills).toBe(1);
  });

  it('an Electron fatal error in the utility process fails the job with its type and location', async () => {
    const worker = labWorker();
    const job = worker.reference(settings('windows-0'));
    const { child } = forks[0]!;
    child.spawn(4245);
    child.emit('error', 'FatalError', 'v8::Isolate', '{}');
    expect(await job.done.then(() => undefined, (e: unknown) => e)).toMatchObject({ code: 'worker-crashed', message: 'The lab worker crashed: Error: FatalError at v8::Isolate' });
  });
});

