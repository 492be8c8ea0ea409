import { ApiError } from '../../app/protocol/api-error.js';
import type {
  ApiErrorPayload, ApiHostMessage, ApiRequest, ApiRequestBody, ApiRequestType, ApiResults, ApiRunEvent,
} from '../../app/protocol/api-messages.js';
import { CLOSE_MESSAGE_TOO_BIG, MAX_API_MESSAGE_BYTES } from '../../app/protocol/api-limits.js';
import { stringifyJson } from '../../app/protocol/json-numbers.js';
import type { RunErrorPayload } from '../../app/protocol/messages.js';
import { parseApiHostMessage } from '../../app/protocol/parse-api-message.js';
import type { RunEventHandlers, WorkbenchApi, WorkbenchCommand } from '../../app/protocol/workbench-api.js';
import { readRunRecord } from '../../app/record/parse-run-record.js';
import type { LabSweepHandlers } from '../../app/lab/lab-api.js';
import { isLabRequestType } from '../../app/lab/lab-api-messages.js';
import { deliverLabEvent, readLabResult } from '../../app/lab/lab-client.js';

/**
 * The part of the browser's WebSocket this client uses. Written out so that the client also runs
 * on Node (tests pass the `ws` package's class, which has the same event-target API).
 */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  /** `close` listeners also get the CloseEvent (its `code`) where the socket passes one. */
  addEventListener(type: 'open' | 'close' | 'error', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { readonly data: unknown }) => void): void;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface WebSocketApiOptions {
  /** default: the global WebSocket (browsers, Node ≥ 22) */
  readonly WebSocket?: WebSocketConstructor;
}

/** The WebSocket API plus the connection itself, so a test or a page unload can close it. */
export interface WebSocketWorkbenchApi extends WorkbenchApi {
  close(): void;
}

/**
 * WorkbenchApi over the serve host's WebSocket (`kvscope serve`). `url` is the endpoint
 * (`ws://127.0.0.1:4310/api`) and `token` the per-launch token the server printed; an empty token
 * relies on the cookie the page was served with. The socket opens on the first call and again on
 * the next call after it closed; a close fails every pending call and every live run.
 */
export function createWebSocketApi(url: string, token: string, options: WebSocketApiOptions = {}): WebSocketWorkbenchApi {
  return new WebSocketClient(url, token, options).api();
}

interface Pending {
  readonly type: ApiRequestType;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

class WebSocketClient {
  private socket: Promise<WebSocketLike> | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly runs = new Map<number, RunEventHandlers>();
  /** the Lab's sweeps, by the id of the request that started them */
  private readonly sweeps = new Map<number, LabSweepHandlers>();
  private readonly commandListeners = new Set<(command: WorkbenchCommand) => void>();

  constructor(private readonly url: string, private readonly token: string, private readonly options: WebSocketApiOptions) {}

  api(): WebSocketWorkbenchApi {
    return {
      host: 'browser',
      environment: () => this.call({ type: 'environment' }),
      openModel: (source, onnxFile) => this.call({ type: 'open-model', source, ...(onnxFile !== undefined ? { onnxFile } : {}) }),
      pickModelFolder: () => this.call({ type: 'pick-model-folder' }),
      preflight: (model, settings, options) =>
        this.call({ type: 'preflight', model, settings, ...(options?.sequenceLengths !== undefined ? { sequenceLengths: options.sequenceLengths } : {}) }),
      checkRun: (settings) => this.call({ type: 'check-run', settings }),
      listFolder: (path, offset) => this.call({ type: 'list-folder', path, ...(offset !== undefined ? { offset } : {}) }),
      startRun: (settings, handlers) => this.call({ type: 'start-run', settings }, handlers),
      cancelRun: async (runId) => void (await this.call({ type: 'cancel-run', runId })),
      listRuns: () => this.call({ type: 'list-runs' }),
      loadRun: (runId) => this.call({ type: 'load-run', runId }),
      deleteRun: async (runId) => void (await this.call({ type: 'delete-run', runId })),
      exportRun: (runId, format) => this.call({ type: 'export-run', runId, format }),
      recentModels: () => this.call({ type: 'recent-models' }),
      onCommand: (listener) => {
        // The serve host has no menu; the subscription is kept so a host that sends commands works.
        this.commandListeners.add(listener);
        return () => void this.commandListeners.delete(listener);
      },
      close: () => void this.socket?.then((socket) => socket.close(1000, 'closed by the page'), () => undefined),
      lab: {
        startSweep: (request, handlers) => this.call({ type: 'lab-start-sweep', request }, undefined, handlers),
        cancelSweep: async (sweepId) => void (await this.call({ type: 'lab-cancel-sweep', sweepId })),
        listSweeps: () => this.call({ type: 'lab-list-sweeps' }),
        loadSweep: (sweepId) => this.call({ type: 'lab-load-sweep', sweepId }),
        loadPoint: (sweepId, pointName) => this.call({ type: 'lab-load-point', sweepId, pointName }),
        exportSweep: (sweepId, format) => this.call({ type: 'lab-export-sweep', sweepId, format }),
      },
    };
  }

  private async call<T extends ApiRequestType>(body: ApiRequestBody<T> & { readonly type: T }, handlers?: RunEventHandlers, sweep?: LabSweepHandlers): Promise<ApiResults[T]> {
    const socket = await this.connect();
    const id = this.nextId++;
    const request = { ...body, id } as ApiRequest;
    // Registered before sending: a run's first event may follow its result immediately.
    if (handlers !== undefined) this.runs.set(id, handlers);
    if (sweep !== undefined) this.sweeps.set(id, sweep);
    const text = stringifyJson(request);
    // Refused here with the reason, rather than sent and answered by the server closing the socket (1009).
    const bytes = text.length * 3 <= MAX_API_MESSAGE_BYTES ? text.length : new TextEncoder().encode(text).length;
    if (bytes > MAX_API_MESSAGE_BYTES) {
      this.runs.delete(id);
      this.sweeps.delete(id);
      throw new ApiError({
        code: 'invalid-input',
        message: `This ${body.type} request is ${(bytes / 2 ** 20).toFixed(1)} MiB; the kvscope server takes messages of at most ${MAX_API_MESSAGE_BYTES / 2 ** 20} MiB.`,
        fix: 'Shorten the prompt (a model\'s context is far smaller than this anyway).',
      });
    }
    return new Promise<ApiResults[T]>((resolve, reject) => {
      this.pending.set(id, { type: body.type, resolve: resolve as (value: unknown) => void, reject });
      socket.send(text);
    });
  }

  private connect(): Promise<WebSocketLike> {
    if (this.socket !== undefined) return this.socket;
    const Socket = this.options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (Socket === undefined) return Promise.reject(new ApiError({ code: 'unsupported', message: 'This JavaScript environment has no WebSocket.' }));
    const target = this.token === '' ? this.url : `${this.url}${this.url.includes('?') ? '&' : '?'}token=${encodeURIComponent(this.token)}`;
    const opening = new Promise<WebSocketLike>((resolve, reject) => {
      const socket = new Socket(target);
      let opened = false;
      socket.addEventListener('open', () => {
        opened = true;
        resolve(socket);
      });
      socket.addEventListener('message', (event) => this.receive(event.data));
      // A refused upgrade (401, 403) only shows as an error then a close, with no status: say what is likely.
      socket.addEventListener('close', (event?: { readonly code?: unknown }) => {
        this.socket = undefined;
        const error: ApiErrorPayload = opened && event?.code === CLOSE_MESSAGE_TOO_BIG
          ? {
            code: 'invalid-input',
            message: `The kvscope server closed the connection: a message was larger than the ${MAX_API_MESSAGE_BYTES / 2 ** 20} MiB it takes (WebSocket close 1009).`,
            fix: 'Shorten the prompt, then try again; the next request reconnects.',
          }
          : opened
          ? { code: 'internal', message: `The connection to the kvscope server (${this.url}) closed.`, fix: 'Check that `kvscope serve` is still running, then reload the page.' }
          : {
            code: 'unauthorized',
            message: `Cannot connect to the kvscope server at ${this.url}: it is not running, or it refused this page's token.`,
            fix: 'Open the exact URL (with ?token=…) that `kvscope serve` printed when it started; the token changes at every launch.',
          };
        if (!opened) reject(new ApiError(error));
        this.failAll(error);
      });
      socket.addEventListener('error', () => undefined);
    });
    this.socket = opening;
    return opening;
  }

  private receive(data: unknown): void {
    let message: ApiHostMessage;
    try {
      message = parseApiHostMessage(JSON.parse(typeof data === 'string' ? data : String(data)));
    } catch (error) {
      // A malformed frame from our own host is a bug; it cannot be routed, so it is reported, not thrown into the socket.
      console.error(`kvscope: ignored a malformed message from the server: ${(error as Error).message}`);
      return;
    }
    switch (message.type) {
      case 'result':
      case 'error':
        this.settle(message);
        return;
      case 'command':
        for (const listener of [...this.commandListeners]) listener(message.command);
        return;
      case 'run-text':
      case 'run-metrics':
      case 'run-done':
      case 'run-error':
        this.deliver(message);
        return;
      case 'lab-sweep-progress':
      case 'lab-sweep-point':
      case 'lab-sweep-done':
      case 'lab-sweep-error':
        deliverLabEvent(this.sweeps, message);
        return;
      default: {
        const unknown: never = message;
        throw new Error(`Unhandled host message ${JSON.stringify(unknown)}`);
      }
    }
  }

  private settle(message: Extract<ApiHostMessage, { type: 'result' | 'error' }>): void {
    const pending = this.pending.get(message.id);
    if (pending === undefined) return;
    this.pending.delete(message.id);
    if (message.type === 'error') {
      this.runs.delete(message.id);
      this.sweeps.delete(message.id);
      pending.reject(new ApiError(message.error));
      return;
    }
    try {
      pending.resolve(readResult(pending.type, message.value));
    } catch (error) {
      pending.reject(new ApiError({ code: 'internal', message: `The server's answer to ${pending.type} is malformed: ${(error as Error).message}` }));
    }
  }

  private deliver(event: ApiRunEvent): void {
    const handlers = this.runs.get(event.id);
    if (handlers === undefined) return;
    switch (event.type) {
      case 'run-text':
        handlers.onText(event.delta, event.tokenIds);
        return;
      case 'run-metrics':
        handlers.onMetrics(event.steps);
        return;
      case 'run-done':
        this.runs.delete(event.id);
        handlers.onDone(event.result, event.savedRunId);
        return;
      case 'run-error':
        this.runs.delete(event.id);
        handlers.onError(event.error);
        return;
      default: {
        const unknown: never = event;
        throw new Error(`Unhandled run event ${JSON.stringify(unknown)}`);
      }
    }
  }

  private failAll(error: ApiErrorPayload): void {
    const pending = [...this.pending.values()];
    const runs = [...this.runs.values()];
    const sweeps = [...this.sweeps.values()];
    this.pending.clear();
    this.runs.clear();
    this.sweeps.clear();
    for (const call of pending) call.reject(new ApiError(error));
    const runError: RunErrorPayload = { code: 'internal', message: error.message, ...(error.fix !== undefined ? { fix: error.fix } : {}) };
    for (const handlers of runs) handlers.onError(runError);
    for (const handlers of sweeps) handlers.onError(runError);
  }
}

/**
 * Results cross JSON, where kvscope writes non-finite numbers as `"Infinity"` (json-numbers.ts). A
 * run record holds such numbers (an exact reconstruction has SNR = Infinity dB), so it is read back
 * through the record reader, which also checks it; the other results hold finite numbers only.
 */
function readResult(type: ApiRequestType, value: unknown): unknown {
  if (type === 'load-run') return readRunRecord(value, 'the run the server sent');
  if (isLabRequestType(type)) return readLabResult(type, value);
  return value;
}
