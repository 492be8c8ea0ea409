import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import type { EvalProgress } from '../../lab/evaluate.js';
import { defaultWindowSettings, type EvalSettings } from '../../lab/eval-settings.js';
import { RunError } from '../../protocol/run-error.js';
import { launchProcess, workerProcessEnv } from '../worker/process-launch.js';
import { LabWorker, liveLabWorkerPids, liveLabWorkers } from './lab-worker-client.js';
import { alive } from '../test-support/processes.js';

/** A lab worker process with the fake engine (workers/test-support/fake-lab-engine.ts): the text's name picks its behaviour. */
const PROCESS = { engineModule: new URL('../../../workers/test-support/fake-lab-engine.ts', import.meta.url).href, launcher: launchProcess };

function settings(name: string): EvalSettings {
  return {
    model: '/models/fake', executionProvider: 'cpu', cacheMode: 'dynamic', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS,
    text: { name, content: 'fake' }, windows: { ...defaultWindowSettings(), maxWindows: 3 },
  };
}

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function rejection(promise: Promise<unknown>): Promise<RunError> {
  const error: unknown = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(RunError);
  return error as RunError;
}

const workers: LabWorker[] = [];
function labWorker(): LabWorker {
  const worker = new LabWorker(PROCESS);
  workers.push(worker);
  return worker;
}

afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.dispose();
  expect(liveLabWorkers()).toBe(0);
});

/** The one pid of the live lab worker processes. */
function onlyPid(): number {
  const pids = liveLabWorkerPids();
  expect(pids).toHaveLength(1);
  return pids[0]!;
}

describe.skipIf(process.platform === 'win32')('a lab worker as a process of its own (a sweep\'s job, issue 23)', () => {
  it('runs its jobs in another process, which dispose ends', async () => {
    const worker = labWorker();
    const { key } = await worker.reference(settings('pid')).done;
    const pid = Number(/^pid-(\d+)$/.exec(key)?.[1]);
    expect(pid).not.toBe(process.pid);
    expect(onlyPid()).toBe(pid);
    await worker.dispose();
    expect(liveLabWorkerPids()).toEqual([]);
    expect(alive(pid)).toBe(false);
  });

  it('a job process killed with SIGKILL mid-job fails the job with a message naming the signal and memory, and later jobs too', async () => {
    const worker = labWorker();
    let pid = 0;
    const job = worker.reference(settings('windows-200'), {
      onProgress: (progress: EvalProgress) => {
        if (progress.windowsDone !== 1) return;
        pid = onlyPid();
        process.kill(pid, 'SIGKILL');
      },
    });
    const error = await rejection(job.done);
    expect(error.code).toBe('worker-crashed');
    expect(error.message).toBe(`The lab worker (process ${pid}) was killed by SIGKILL before its job finished: it may have run out of memory (Linux's out-of-memory killer sends SIGKILL; \`dmesg\` says so), or something else killed it.`);
    expect(error.fix).toMatch(/fewer --jobs/);
    expect((await rejection(worker.reference(settings('windows-0')).done)).code).toBe('worker-crashed');
    expect(liveLabWorkers()).toBe(0);
  });

  it('ignores SIGINT and SIGTERM (the terminal\'s Ctrl-C reaches the whole process group; the host stops its jobs)', async () => {
    const worker = labWorker();
    const job = worker.reference(settings('windows-100'), {
      onProgress: (progress: EvalProgress) => {
        if (progress.windowsDone !== 1) return;
        const pid = onlyPid();
        process.kill(pid, 'SIGINT');
        process.kill(pid, 'SIGTERM');
      },
    });
    expect((await job.done).windowsComputed).toBe(3);
  });

  it('is killed when a cancelled job does not stop within the deadline, as a thread would be terminated', async () => {
    const worker = new LabWorker({ ...PROCESS, cancelTimeoutMs: 300 });
    workers.push(worker);
    let pid = 0;
    const job = worker.evaluate(settings('stuck-after-0'), {
      onProgress: (progress) => {
        if (progress.windowsDone !== 2) return;
        pid = onlyPid();
        job.cancel();
      },
    });
    expect((await rejection(job.done)).code).toBe('cancel-timeout');
    await until(() => !alive(pid), 'the stuck process to be gone');
  });

  it('ends when its host goes away (no orphan), and a host that disposed it ends by itself', async () => {
    const host = fileURLToPath(new URL('./test-support/job-process-host.ts', import.meta.url));
    const start = (mode: string) => spawn(process.execPath, ['--import', 'tsx', host, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = (child: ReturnType<typeof start>): { text: string } => {
      const out = { text: '' };
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => void (out.text += chunk));
      return out;
    };
    const orphaning = start('orphan');
    const printed = lines(orphaning);
    await until(() => /pid-\d+\n/.test(printed.text), 'the worker\'s pid', 20_000);
    const pid = Number(/pid-(\d+)/.exec(printed.text)![1]);
    expect(alive(pid)).toBe(true);
    orphaning.kill('SIGKILL');
    await until(() => !alive(pid), 'the orphaned worker process to exit');

    const disposing = start('dispose');
    const disposed = lines(disposing);
    const code = await new Promise<number | null>((resolve) => disposing.once('close', resolve));
    expect(code).toBe(0);
    expect(alive(Number(/pid-(\d+)/.exec(disposed.text)![1]))).toBe(false);
  }, 40_000);

  it('gives the child its workerData and no inspector flags of the host\'s', () => {
    const env = workerProcessEnv({ engineModule: 'file:///engine.js' }, { NODE_OPTIONS: '--inspect=9229 --max-old-space-size=4096 --inspect-brk', HOME: '/home/x' });
    expect(env).toEqual({ NODE_OPTIONS: '--max-old-space-size=4096', HOME: '/home/x', KVSCOPE_WORKER_DATA: '{"engineModule":"file:///engine.js"}' });
    expect(workerProcessEnv({}, { NODE_OPTIONS: '--inspect' })).toEqual({ KVSCOPE_WORKER_DATA: '{}' });
  });
});
