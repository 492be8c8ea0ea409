import type { RequestId, RunErrorPayload } from '../../protocol/messages.js';
import { CancelDeadline, DEFAULT_CANCEL_TIMEOUT_MS } from './cancel-deadline.js';
import { workerExitError } from './worker-exit.js';
import { launchThread, type WorkerEntry, type WorkerLaunchOptions } from './worker-launch.js';
import type { WorkerLauncher, WorkerTransport } from './worker-transport.js';

/**
 * What the supervisor needs to know of a worker's protocol (app/protocol/messages.ts for generation,
 * app/lab/lab-protocol.ts for the lab): how to read what it sends, which message is its last word on
 * a request, how to ask it to stop one, and how people call it.
 */
export interface SupervisedProtocol<Host, Reply extends { readonly type: string }> {
  readonly entry: WorkerEntry;
  /** how the errors name the worker: "generation worker", "lab worker" */
  readonly name: string;
  /** what a request is to people, in "… before the run finished": "the run", "its job" */
  readonly work: string;
  readonly version: number;
  /** reads (and checks) one message the worker posted; throws a ProtocolError when it is malformed */
  parse(raw: unknown): Reply;
  /** the request a message answers; undefined for `ready` */
  requestOf(message: Reply): RequestId | undefined;
  /** the worker's last word on its request (`done`, `error`, …): nothing more comes for that id */
  isLast(message: Reply): boolean;
  cancelMessage(id: RequestId): Host;
  /** feeds the cancel deadline the step times a message reports; absent: the time between two messages is a step */
  observe?(message: Reply, deadline: CancelDeadline): void;
  /** what the cancel-timeout error says reached the caller before the worker was terminated */
  readonly delivered: string;
  /** the fix an out-of-memory crash (or a process killed by SIGKILL) suggests */
  readonly outOfMemoryFix: string;
}

export interface SupervisorOptions extends WorkerLaunchOptions {
  /**
   * the floor of how long a cancelled request may take to stop before its worker is terminated
   * (cancel-deadline.ts, default 10 s); null: never (the CLI's threads: terminating a thread whose
   * session.run is in flight aborts the process natively, and a slow step, a long prefill on a big
   * model, is no hang; SIGKILL remains the hard stop). A process worker may be killed at any time:
   * app/node/lab/sweep-job-worker.ts gives a sweep's job processes the deadline even on the CLI.
   */
  readonly cancelTimeoutMs?: number | null;
  /** how the worker starts: a thread of this process (default, worker-launch.ts) or a process of its own (process-launch.ts) */
  readonly launcher?: WorkerLauncher;
}

/** One request the worker answers: every message for it goes to `receive`, its last included. */
export interface SupervisedRequest<Reply> {
  receive(message: Reply): void;
  /** the request ended without the worker's last word: a crash, an exit, stuck after a cancel, replaced, disposed */
  fail(error: RunErrorPayload): void;
}

interface Pending<Reply> {
  readonly request: SupervisedRequest<Reply>;
  readonly deadline: CancelDeadline;
  /** when the request's last message came; a step is the time between two (the first includes loading, no step) */
  lastHeardMs: number | undefined;
  cancelTimer: ReturnType<typeof setTimeout> | undefined;
}

/** Workers (threads and processes) started and not yet exited, by entry, so tests can check that every worker went away. */
const liveWorkers = new Map<WorkerEntry, Set<WorkerTransport>>([['generation-worker', new Set()], ['lab-worker', new Set()]]);

export function liveWorkerCount(entry: WorkerEntry): number {
  return liveWorkers.get(entry)!.size;
}

/** The process ids of the live process workers of `entry` (tests check that they are other processes, and gone after). */
export function liveWorkerPids(entry: WorkerEntry): number[] {
  return [...liveWorkers.get(entry)!].flatMap((worker) => (worker.pid === undefined ? [] : [worker.pid]));
}

/**
 * THE supervisor of a worker, thread or process (worker-transport.ts), for a generation run's own worker (worker-client.ts), the warm
 * generation worker (warm-worker.ts) and the lab's workers (app/node/lab/lab-worker-client.ts): it
 * starts the worker when a request needs one, checks every message against the protocol and routes
 * it to its request by id, and on a cancel gives the worker the shared deadline (cancel-deadline.ts:
 * the floor or four of its slowest steps) before it calls the worker stuck, fails the request with
 * `cancel-timeout` and terminates the worker. A crash, an exit, an unreadable message or a protocol
 * version from another build fail every request in flight with an error that says so; the next
 * request starts a fresh worker. `dispose` terminates the worker and waits for it to be gone.
 */
export class WorkerSupervisor<Host, Reply extends { readonly type: string }> {
  #worker: WorkerTransport | null = null;
  #exited: Promise<void> = Promise.resolve();
  readonly #pending = new Map<RequestId, Pending<Reply>>();
  #disposed = false;

  constructor(
    private readonly protocol: SupervisedProtocol<Host, Reply>,
    private readonly options: SupervisorOptions = {},
    /** the worker was lost (crashed, exited, stuck, spoke another protocol), after its requests failed */
    private readonly onLost: (error: RunErrorPayload) => void = () => undefined,
  ) {}

  /** Requests sent and not yet answered with a last word (abandoned ones included). */
  get pending(): number {
    return this.#pending.size;
  }

  /** Whether a worker is up (started and not lost, replaced or disposed). */
  get started(): boolean {
    return this.#worker !== null;
  }

  /** Posts request `id` (starting the worker if none is up); the worker's messages for it go to `request`. */
  request(id: RequestId, message: Host, request: SupervisedRequest<Reply>): void {
    if (this.#disposed) {
      request.fail({ code: 'internal', message: `The ${this.protocol.name} was disposed.` });
      return;
    }
    let worker: WorkerTransport;
    try {
      worker = this.#ensureWorker();
    } catch (error) {
      request.fail({ code: 'internal', message: `Cannot start the ${this.protocol.name}: ${(error as Error).message}` });
      return;
    }
    this.#pending.set(id, { request, deadline: new CancelDeadline(), lastHeardMs: undefined, cancelTimer: undefined });
    worker.postMessage(message);
  }

  /**
   * Asks the worker to stop request `id` at its next step; if it has not said its last word on it
   * within the deadline, the request fails with `cancel-timeout` and the worker is terminated.
   */
  cancel(id: RequestId): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#worker?.postMessage(this.protocol.cancelMessage(id));
    this.#armDeadline(id, pending);
  }

  /**
   * The caller gives up on request `id` (a run disposed before it ended, which has failed already):
   * it is cancelled, and the worker is replaced if it is still on it after the deadline. Its request
   * still hears the worker's last word (or the failure), which is when the worker is free again.
   */
  abandon(id: RequestId): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.cancel(id);
    // An abandoned request keeps no one waiting: its timer must not hold the process open.
    (pending.cancelTimer as { unref?: () => void } | undefined)?.unref?.();
  }

  /** Terminates the worker; whatever it was answering fails with `error`. The next request starts a fresh one. */
  replace(error: RunErrorPayload): void {
    const worker = this.#worker;
    if (worker === null) return;
    this.#worker = null;
    this.#failAll(error);
    // Its exit event follows (and is not a loss: it is no longer this supervisor's worker).
    worker.terminate();
  }

  /** Replaces the worker for good (requests in flight fail with `error`) and resolves once it has exited. */
  async dispose(error: RunErrorPayload = { code: 'cancelled', message: `The ${this.protocol.name} was disposed before it answered.` }): Promise<void> {
    this.#disposed = true;
    const exited = this.#exited;
    this.replace(error);
    await exited;
  }

  #ensureWorker(): WorkerTransport {
    if (this.#worker !== null) return this.#worker;
    const live = liveWorkers.get(this.protocol.entry)!;
    const name = this.protocol.name;
    let exited!: () => void;
    // The transport reports asynchronously (worker-transport.ts), so `worker` is assigned before any event.
    const worker: WorkerTransport = (this.options.launcher ?? launchThread)(this.protocol.entry, this.options, {
      message: (raw) => this.#receive(worker, raw),
      error: (error) => this.#lost(worker, this.#crashPayload(error)),
      messageError: (error) => this.#lost(worker, { code: 'protocol', message: `A message from the ${name} could not be deserialized: ${error.message}` }),
      exit: (exit) => {
        live.delete(worker);
        exited();
        this.#lost(worker, workerExitError(exit, worker, this.protocol));
      },
    });
    live.add(worker);
    this.#worker = worker;
    this.#exited = new Promise<void>((resolve) => (exited = resolve));
    return worker;
  }

  #receive(worker: WorkerTransport, raw: unknown): void {
    if (this.#worker !== worker) return;
    let message: Reply;
    try {
      message = this.protocol.parse(raw);
    } catch (error) {
      this.#lost(worker, { code: 'protocol', message: (error as Error).message });
      return;
    }
    const id = this.protocol.requestOf(message);
    if (id === undefined) {
      this.#checkVersion(worker, message);
      return;
    }
    // id 0 (NO_REQUEST): the worker could not tell which request failed, so every one in flight did.
    const ids = id === 0 ? [...this.#pending.keys()] : [id];
    for (const each of ids) this.#deliver(each, message);
  }

  #deliver(id: RequestId, message: Reply): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return; // a late answer to a request that already failed
    const last = this.protocol.isLast(message);
    if (this.protocol.observe !== undefined) this.protocol.observe(message, pending.deadline);
    else {
      const now = performance.now();
      if (pending.lastHeardMs !== undefined) pending.deadline.observeStepMs(now - pending.lastHeardMs);
      pending.lastHeardMs = now;
    }
    if (last) {
      clearTimeout(pending.cancelTimer);
      this.#pending.delete(id);
    }
    pending.request.receive(message);
  }

  #checkVersion(worker: WorkerTransport, message: Reply): void {
    const version = (message as { readonly protocolVersion?: unknown }).protocolVersion;
    if (version === this.protocol.version) return;
    this.#lost(worker, {
      code: 'protocol',
      message: `The ${this.protocol.name} speaks protocol version ${String(version)}; this host speaks ${this.protocol.version}.`,
      fix: 'Rebuild kvscope (npm run build) so the worker and the host come from the same sources.',
    });
  }

  #armDeadline(id: RequestId, pending: Pending<Reply>): void {
    if (this.options.cancelTimeoutMs === null || pending.cancelTimer !== undefined) return;
    const timeoutMs = pending.deadline.timeoutMs(this.options.cancelTimeoutMs ?? DEFAULT_CANCEL_TIMEOUT_MS);
    pending.cancelTimer = setTimeout(() => {
      if (this.#pending.get(id) !== pending) return;
      this.#pending.delete(id);
      const error: RunErrorPayload = { code: 'cancel-timeout', message: pending.deadline.message(timeoutMs, this.protocol.name, this.protocol.delivered) };
      pending.request.fail(error);
      this.replace({ code: 'worker-crashed', message: `The ${this.protocol.name} was replaced (recycled) before it answered.` });
      this.onLost(error);
    }, timeoutMs);
  }

  /** The worker died: whatever it was answering fails, and the next request starts a fresh one. */
  #lost(worker: WorkerTransport, error: RunErrorPayload): void {
    if (this.#worker !== worker) return;
    this.replace(error);
    this.onLost(error);
  }

  #failAll(error: RunErrorPayload): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const each of pending) {
      clearTimeout(each.cancelTimer);
      each.request.fail(error);
    }
  }

  #crashPayload(error: Error): RunErrorPayload {
    const name = this.protocol.name;
    if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return { code: 'worker-crashed', message: `The ${name} ran out of memory: ${error.message}`, fix: this.protocol.outOfMemoryFix };
    }
    return { code: 'worker-crashed', message: `The ${name} crashed: ${error.name}: ${error.message}` };
  }
}
