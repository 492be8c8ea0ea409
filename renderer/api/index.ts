import type { KvscopeBridge } from '../../app/protocol/kvscope-bridge.js';
import type { WorkbenchApi } from '../../app/protocol/workbench-api.js';
import { createBridgeApi } from './bridge-api.js';
import { createWebSocketApi, type WebSocketConstructor } from './websocket-api.js';

export type {
  ModelSource, ModelSummary, RunEventHandlers, RunExport, RunSummary, RunTicket, WorkbenchApi, WorkbenchCommand, WorkbenchEnvironment,
} from '../../app/protocol/workbench-api.js';
export { ApiError } from '../../app/protocol/api-error.js';
export type { ApiErrorCode } from '../../app/protocol/api-messages.js';

/** The globals a page offers: the Electron preload's bridge, or a location to find the serve host from. */
export interface PageScope {
  readonly kvscope?: KvscopeBridge;
  readonly location?: { readonly protocol: string; readonly host: string; readonly search: string };
  readonly WebSocket?: WebSocketConstructor;
}

let current: WorkbenchApi | undefined;

/**
 * The one entry point the UI uses: the Electron preload's `window.kvscope` when present, else the
 * serve-mode WebSocket client for the server that served this page, with the `?token=` of the page
 * URL. One API per page: every caller shares its connection and listeners.
 */
export function getWorkbenchApi(): WorkbenchApi {
  current ??= selectWorkbenchApi(globalThis as PageScope);
  return current;
}

/** getWorkbenchApi's choice for a given scope (tests pass their own). */
export function selectWorkbenchApi(scope: PageScope): WorkbenchApi {
  if (scope.kvscope !== undefined) return createBridgeApi(scope.kvscope);
  const location = scope.location;
  if (location === undefined || !location.protocol.startsWith('http')) {
    throw new Error('kvscope: no workbench host. Open this page from `kvscope serve` (its printed URL) or run it inside the Electron app.');
  }
  const socketProtocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const token = new URLSearchParams(location.search).get('token') ?? '';
  return createWebSocketApi(`${socketProtocol}//${location.host}/api`, token, scope.WebSocket !== undefined ? { WebSocket: scope.WebSocket } : {});
}
