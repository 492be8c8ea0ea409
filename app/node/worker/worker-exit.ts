import type { RunErrorPayload } from '../../protocol/messages.js';
import type { WorkerExit, WorkerTransport } from './worker-transport.js';

/** What the supervisor's protocol says of a worker when it ends unasked (worker-supervisor.ts SupervisedProtocol). */
export interface ExitWording {
  /** "lab worker" */
  readonly name: string;
  /** "its job" */
  readonly work: string;
  readonly outOfMemoryFix: string;
}

/**
 * The error of the requests in flight when their worker ended without being asked to. A thread ends
 * with a code only; a process may be killed by a signal, and SIGKILL is what Linux's out-of-memory
 * killer sends, so that one names memory (and the fix) as the likely cause.
 */
export function workerExitError(exit: WorkerExit, worker: Pick<WorkerTransport, 'kind' | 'pid'>, wording: ExitWording): RunErrorPayload {
  const { name, work } = wording;
  if (worker.kind === 'thread') {
    return { code: 'worker-crashed', message: `The ${name} exited with code ${exit.code ?? 'none'} before ${work} finished (process.exit in native code, or the thread was terminated).` };
  }
  const which = worker.pid === undefined ? `The ${name} process` : `The ${name} (process ${worker.pid})`;
  if (exit.signal === 'SIGKILL') {
    return {
      code: 'worker-crashed',
      message: `${which} was killed by SIGKILL before ${work} finished: it may have run out of memory (Linux's out-of-memory killer sends SIGKILL; \`dmesg\` says so), or something else killed it.`,
      fix: wording.outOfMemoryFix,
    };
  }
  if (exit.signal !== null) {
    const native = exit.signal === 'SIGSEGV' || exit.signal === 'SIGABRT' || exit.signal === 'SIGBUS' ? ' (a crash in native code)' : '';
    return { code: 'worker-crashed', message: `${which} was killed by ${exit.signal}${native} before ${work} finished.` };
  }
  return { code: 'worker-crashed', message: `${which} exited with code ${exit.code ?? 'none'} before ${work} finished.` };
}
