import type { ApiErrorMessage, ApiRequestType, ApiResultMessage } from './api-messages.js';
import type { ArgsOf, MethodTable } from './api-declaration.js';
import type { WORKBENCH_METHODS } from './api-methods.js';
import type { WorkbenchCommand } from './workbench-api.js';
import type { LAB_METHODS } from '../lab/lab-api-methods.js';

/** One bridge function per declared method, `prefix`ed (`labStartSweep`) where given. */
export type BridgeFunctions<T extends MethodTable, Prefix extends string = ''> = {
  [K in keyof T & string as Prefix extends '' ? K : `${Prefix}${Capitalize<K>}`]: (...args: ArgsOf<T[K]>) => Promise<BridgeReply<T[K]['type'] & ApiRequestType>>;
};

/**
 * What the Electron preload exposes as `window.kvscope` (contextBridge): one function per capability
 * (STYLE.md §3), never ipcRenderer, one per method declared in api-methods.ts (and lab-api-methods.ts,
 * prefixed `lab`). Each call resolves with the host's reply envelope rather than rejecting, because
 * an Error crossing contextBridge loses its own fields (`code`, `fix`); the renderer's adapter
 * (renderer/api/bridge-api.ts) turns an `error` reply into an ApiError. A stream's handlers are
 * registered before the request goes out, so no event can arrive unrouted.
 */
export interface KvscopeBridge extends BridgeFunctions<typeof WORKBENCH_METHODS>, Partial<BridgeFunctions<typeof LAB_METHODS, 'lab'>> {
  readonly host: 'electron';
  readonly protocolVersion: number;
  /** menu commands and dropped folders; returns an unsubscribe function */
  onCommand(listener: (command: WorkbenchCommand) => void): () => void;
}

/** The host's reply to one request of type `T`. */
export type BridgeReply<T extends ApiRequestType> = ApiResultMessage<T> | ApiErrorMessage;

/** The bridge function's name for a method: as declared, or `lab` + its name for the Lab's. */
export function bridgeFunctionName(group: 'workbench' | 'lab', name: string): string {
  return group === 'lab' ? `lab${name.charAt(0).toUpperCase()}${name.slice(1)}` : name;
}
