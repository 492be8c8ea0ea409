import { ApiError } from '../../app/protocol/api-error.js';
import { buildClient, type MethodTable } from '../../app/protocol/api-declaration.js';
import { WORKBENCH_METHODS } from '../../app/protocol/api-methods.js';
import type { BridgeReply, KvscopeBridge } from '../../app/protocol/kvscope-bridge.js';
import { bridgeFunctionName } from '../../app/protocol/kvscope-bridge.js';
import type { LabApi } from '../../app/lab/lab-api.js';
import { LAB_METHODS } from '../../app/lab/lab-api-methods.js';
import type { WorkbenchApi } from '../../app/protocol/workbench-api.js';

/**
 * WorkbenchApi over the Electron preload's `window.kvscope`, one function per declared method. The
 * bridge resolves with reply envelopes (an Error crossing contextBridge would lose `code` and `fix`);
 * here an `error` reply becomes a thrown ApiError again, so both hosts fail the same way.
 */
export function createBridgeApi(bridge: KvscopeBridge): WorkbenchApi {
  const workbench = overBridge(bridge, WORKBENCH_METHODS, 'workbench') as unknown as Omit<WorkbenchApi, 'host' | 'onCommand' | 'lab'>;
  return {
    host: 'electron',
    ...workbench,
    onCommand: (listener) => bridge.onCommand(listener),
    ...labOverBridge(bridge),
  };
}

/** The Lab's functions, where the preload has them all (it always does in this build). */
function labOverBridge(bridge: KvscopeBridge): Pick<WorkbenchApi, 'lab'> {
  const present = Object.keys(LAB_METHODS).every((name) => typeof functionsOf(bridge)[bridgeFunctionName('lab', name)] === 'function');
  return present ? { lab: overBridge(bridge, LAB_METHODS, 'lab') as unknown as LabApi } : {};
}

function overBridge(bridge: KvscopeBridge, table: MethodTable, group: 'workbench' | 'lab'): Record<string, (...args: unknown[]) => Promise<unknown>> {
  const names = new Map(Object.entries(table).map(([name, declaration]) => [declaration.type, bridgeFunctionName(group, name)]));
  // The bridge takes the call's own arguments (it builds the request itself, in the preload).
  return buildClient(table, async (declaration, _body, _handlers, args) => {
    const call = functionsOf(bridge)[names.get(declaration.type)!]!;
    return unwrap(call(...args) as Promise<BridgeReply<never>>);
  });
}

function functionsOf(bridge: KvscopeBridge): Readonly<Record<string, ((...args: unknown[]) => Promise<unknown>) | undefined>> {
  return bridge as unknown as Readonly<Record<string, ((...args: unknown[]) => Promise<unknown>) | undefined>>;
}

async function unwrap(reply: Promise<BridgeReply<never>>): Promise<unknown> {
  const answer = await reply;
  if (answer.type === 'error') throw new ApiError(answer.error);
  return answer.value;
}
