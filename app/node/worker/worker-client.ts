import type { RunSettings } from '../../engine/types.js';
import type { HostMessage, RequestId, WorkerMessage } from '../../protocol/messages.js';
import type { RunHandle, RunHandlers } from '../../protocol/run-handle.js';
import { GENERATION_WORKER, GenerationRun } from './generation-run.js';
import { webgpuGate, type ExclusiveGate } from './exclusive-gate.js';
import { liveWorkerCount, WorkerSupervisor, type SupervisorOptions } from './worker-supervisor.js';

export { DEFAULT_CANCEL_TIMEOUT_MS } from './cancel-deadline.js';

export interface StartRunOptions extends SupervisorOptions {
  /** the gate WebGPU runs pass through (default: the process's one gate) */
  readonly webgpuGate?: ExclusiveGate;
}

let nextRequestId = 1;

/** Generation worker threads started and not yet exited (a run's own and the warm one), so tests can check that every one went away. */
export function liveGenerationWorkers(): number {
  return liveWorkerCount('generation-worker');
}

/**
 * Runs one generation in its own worker thread and streams what it reports. One worker per run:
 * the model session, its native memory and any WebGPU device go away with the thread. WebGPU runs
 * pass one at a time (two WebGPU sessions at once segfault onnxruntime-node), and the gate opens
 * only when the thread is gone: its WebGPU device dies with it.
 */
export function startRun(settings: RunSettings, handlers: RunHandlers = {}, options: StartRunOptions = {}): RunHandle {
  const id: RequestId = nextRequestId++;
  const supervisor = new WorkerSupervisor<HostMessage, WorkerMessage>(GENERATION_WORKER, options);
  let state: 'queued' | 'running' = 'queued';
  let release: () => void = () => undefined;
  const run = new GenerationRun(id, handlers, {
    cancel: () => {
      if (state === 'running') supervisor.cancel(id);
      else run.fail({ code: 'cancelled', message: 'The run was cancelled while it waited for another WebGPU run to finish; it never started.' });
    },
    dispose: () => undefined,
  }, () => {
    // The first outcome wins; the worker then goes, and the gate opens once it has exited.
    void supervisor.dispose().then(() => release());
  });
  const spawn = (): void => {
    state = 'running';
    supervisor.request(id, { type: 'start', id, settings }, run);
  };
  if (settings.executionProvider !== 'webgpu') spawn();
  else {
    const gate = options.webgpuGate ?? webgpuGate;
    if (gate.pending > 0) safely(run, () => handlers.onQueued?.());
    void gate.acquire().then((releaseGate) => {
      release = releaseGate;
      // Cancelled or disposed while queued: pass the gate on without starting a worker.
      if (run.isSettled) releaseGate();
      else spawn();
    });
  }
  return run;
}

/** A handler that throws is a bug in the caller; it ends the run instead of escaping. */
function safely(run: GenerationRun, call: () => void): void {
  try {
    call();
  } catch (error) {
    run.fail({ code: 'internal', message: `A run handler threw: ${(error as Error).message}` });
  }
}
