import type { BrowserWindow, IpcMain, IpcMainInvokeEvent } from 'electron';
import type { ApiSession } from '../../app/node/workbench/api-session.js';
import { MAX_API_MESSAGE_BYTES } from '../../app/protocol/api-limits.js';
import type { ApiErrorMessage, ApiResponse } from '../../app/protocol/api-messages.js';
import { NO_REQUEST } from '../../app/protocol/messages.js';
import { API_REQUEST_CHANNEL } from '../preload/ipc-channels.js';

export interface ApiIpcOptions {
  /** the window whose page may call the API (null while none is open) */
  window(): BrowserWindow | null;
  /** that window's session (api-session.ts), which validates each message */
  session(): ApiSession | null;
  isAppUrl(url: string): boolean;
  /** where refusals are reported (a refusal means a bug or an attack; the page only learns "unauthorized") */
  onRefused?(reason: string): void;
}

/**
 * ipcMain, wrapped once (VS Code's validatedIpcMain): the API's one channel answers only the main
 * frame of the workbench window showing the workbench's own page, and every message it accepts goes
 * through the session's validator (app/protocol/parse-api-message.ts). Nothing else is registered,
 * and there is no synchronous IPC. Returns the unregister function.
 */
export function registerApiIpc(ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>, options: ApiIpcOptions): () => void {
  ipcMain.handle(API_REQUEST_CHANNEL, async (event: IpcMainInvokeEvent, message: unknown): Promise<ApiResponse> => {
    const refusal = senderRefusal(event, options.window(), options.isAppUrl);
    const session = options.session();
    if (refusal !== null || session === null) {
      const reason = refusal ?? 'no workbench session is open';
      options.onRefused?.(reason);
      return unauthorized(message, reason);
    }
    const oversize = sizeRefusal(message);
    if (oversize !== null) return oversize;
    return session.handle(message);
  });
  return () => ipcMain.removeHandler(API_REQUEST_CHANNEL);
}

/** Why a sender is not the workbench page (Electron security checklist #17), or null when it is. */
export function senderRefusal(event: Pick<IpcMainInvokeEvent, 'sender' | 'senderFrame'>, window: BrowserWindow | null, isAppUrl: (url: string) => boolean): string | null {
  if (window === null || window.isDestroyed()) return 'the workbench window is closed';
  if (event.sender !== window.webContents) return 'the message came from another web contents';
  const frame = event.senderFrame;
  if (frame === null) return 'the sending frame is gone';
  if (frame.parent !== null) return `the message came from a subframe (${frame.url})`;
  if (!isAppUrl(frame.url)) return `the message came from a foreign page (${frame.url})`;
  return null;
}

function unauthorized(message: unknown, reason: string): ApiErrorMessage {
  return { type: 'error', id: requestIdOf(message), error: { code: 'unauthorized', message: `Refused: ${reason}.` } };
}

/**
 * The same limit as the serve host's WebSocket (app/protocol/api-limits.ts): IPC messages arrive as
 * structured clones, so their JSON size is measured here; a value JSON cannot hold (nesting too deep
 * to serialize, a cycle, a BigInt) is no API request either. Null when the message may go on.
 */
export function sizeRefusal(message: unknown): ApiErrorMessage | null {
  let bytes: number;
  try {
    bytes = Buffer.byteLength(JSON.stringify(message) ?? '', 'utf8');
  } catch (error) {
    return { type: 'error', id: requestIdOf(message), error: { code: 'invalid-request', message: `Not an API request: it cannot be read as JSON (${(error as Error).message}).` } };
  }
  if (bytes <= MAX_API_MESSAGE_BYTES) return null;
  return {
    type: 'error', id: requestIdOf(message),
    error: {
      code: 'invalid-input',
      message: `This request is ${(bytes / 2 ** 20).toFixed(1)} MiB; the workbench takes messages of at most ${MAX_API_MESSAGE_BYTES / 2 ** 20} MiB.`,
      fix: 'Shorten the prompt (a model\'s context is far smaller than this anyway).',
    },
  };
}

function requestIdOf(message: unknown): number {
  const id = typeof message === 'object' && message !== null ? (message as { id?: unknown }).id : undefined;
  return Number.isSafeInteger(id) && (id as number) >= 1 ? (id as number) : NO_REQUEST;
}
