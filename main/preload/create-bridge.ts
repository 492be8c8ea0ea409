import type { ApiEvent, ApiResponse, ApiRunEvent } from '../../app/protocol/api-messages.js';
import { API_PROTOCOL_VERSION } from '../../app/protocol/api-messages.js';
import { buildClient, type SendRequest } from '../../app/protocol/api-declaration.js';
import { WORKBENCH_METHODS } from '../../app/protocol/api-methods.js';
import { bridgeFunctionName, type KvscopeBridge } from '../../app/protocol/kvscope-bridge.js';
import { LAB_METHODS } from '../../app/lab/lab-api-methods.js';
import type { RunEventHandlers, WorkbenchCommand } from '../../app/protocol/workbench-api.js';
import { API_EVENT_CHANNEL, API_REQUEST_CHANNEL } from './ipc-channels.js';
import type { LabSweepHandlers } from '../../app/lab/lab-api.js';
import { isLabEventType, type LabApiEvent } from '../../app/lab/lab-api-messages.js';
import { deliverLabEvent } from '../../app/lab/lab-client.js';
import { deliverRunEvent } from '../../app/protocol/run-event-routing.js';

/** The part of ipcRenderer the bridge uses; it never leaves this module (STYLE.md §3). */
export interface BridgeIpc {
  invoke(channel: string, message: unknown): Promise<unknown>;
  on(channel: string, listener: (event: unknown, message: unknown) => void): void;
}

/** The bridge and the one thing the preload itself adds: dropped folders, which only it can turn into paths. */
export interface BridgeParts {
  readonly bridge: KvscopeBridge;
  dispatchCommand(command: WorkbenchCommand): void;
}

/**
 * `window.kvscope`: one function per capability over two channels, one per declared method.
 * Requests are numbered here; a run's handlers are registered under its request id before the request leaves, and the events
 * main sends for it (tagged with that id) go to them. Listeners get the message only, never the
 * IpcRendererEvent (Electron security checklist #20). Main is trusted, so its messages are not
 * re-validated here; main validates everything this sends.
 */
export function createKvscopeBridge(ipc: BridgeIpc): BridgeParts {
  let nextId = 1;
  const runs = new Map<number, RunEventHandlers>();
  const sweeps = new Map<number, LabSweepHandlers>();
  const commandListeners = new Set<(command: WorkbenchCommand) => void>();

  const dispatchCommand = (command: WorkbenchCommand): void => {
    for (const listener of [...commandListeners]) listener(command);
  };

  ipc.on(API_EVENT_CHANNEL, (_event, message) => {
    const event = message as ApiEvent;
    if (event.type === 'command') return dispatchCommand(event.command);
    if (isLabEventType(event.type)) return deliverLabEvent(sweeps, event as LabApiEvent);
    return deliverRunEvent(runs, event as ApiRunEvent);
  });

  const send: SendRequest = (declaration, body, handlers) => {
    const id = nextId++;
    if (handlers !== undefined && declaration.stream === 'run') runs.set(id, handlers as RunEventHandlers);
    if (handlers !== undefined && declaration.stream === 'sweep') sweeps.set(id, handlers as LabSweepHandlers);
    const forget = (): void => {
      runs.delete(id);
      sweeps.delete(id);
    };
    return ipc.invoke(API_REQUEST_CHANNEL, { ...body, id }).then(
      (reply) => {
        if ((reply as ApiResponse).type === 'error') forget();
        return reply;
      },
      (error: unknown) => {
        forget();
        return { type: 'error', id, error: { code: 'internal', message: `The main process did not answer: ${(error as Error).message}` } } satisfies ApiResponse;
      },
    );
  };

  // One function per declared method (api-methods.ts, lab-api-methods.ts); each resolves with the reply envelope.
  const functions: Record<string, unknown> = {};
  for (const [group, table] of [['workbench', WORKBENCH_METHODS], ['lab', LAB_METHODS]] as const) {
    for (const [name, call] of Object.entries(buildClient(table, send, { keepResult: true }))) functions[bridgeFunctionName(group, name)] = call;
  }
  const bridge = {
    host: 'electron',
    protocolVersion: API_PROTOCOL_VERSION,
    ...functions,
    onCommand: (listener: (command: WorkbenchCommand) => void) => {
      commandListeners.add(listener);
      return () => void commandListeners.delete(listener);
    },
  } as unknown as KvscopeBridge;
  return { bridge, dispatchCommand };
}
