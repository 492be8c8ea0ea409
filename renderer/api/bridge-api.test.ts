import { describe, expect, it } from 'vitest';
import { ApiError } from '../../app/protocol/api-error.js';
import type { KvscopeBridge } from '../../app/protocol/kvscope-bridge.js';
import { WORKBENCH_METHODS } from '../../app/protocol/api-methods.js';
import { createBridgeApi } from './bridge-api.js';

function fakeBridge(overrides: Partial<KvscopeBridge>): KvscopeBridge {
  const unused = async () => { throw new Error('not used'); };
  const functions = Object.fromEntries(Object.keys(WORKBENCH_METHODS).map((name) => [name, unused]));
  return { ...functions, host: 'electron', protocolVersion: 1, onCommand: () => () => undefined, ...overrides } as KvscopeBridge;
}

describe('the Electron API adapter', () => {
  it('unwraps results', async () => {
    const api = createBridgeApi(fakeBridge({
      recentModels: async () => ({ type: 'result', id: 1, value: [{ kind: 'synthetic' }] }),
      cancelRun: async () => ({ type: 'result', id: 2, value: null }),
    }));
    expect(api.host).toBe('electron');
    expect(await api.recentModels()).toEqual([{ kind: 'synthetic' }]);
    expect(await api.cancelRun('r')).toBeUndefined();
  });

  it('turns error replies into ApiErrors with their code and fix', async () => {
    const api = createBridgeApi(fakeBridge({
      loadRun: async () => ({ type: 'error', id: 1, error: { code: 'invalid-input', message: '/runs/x.json does not exist. Check the path.', fix: 'Pick another run.' } }),
    }));
    const error = await api.loadRun('x').catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'invalid-input', fix: 'Pick another run.', message: '/runs/x.json does not exist. Check the path.' });
  });

  it('passes command subscriptions through', () => {
    const listeners: unknown[] = [];
    const api = createBridgeApi(fakeBridge({ onCommand: (listener) => (listeners.push(listener), () => void listeners.pop()) }));
    const unsubscribe = api.onCommand(() => undefined);
    expect(listeners).toHaveLength(1);
    unsubscribe();
    expect(listeners).toHaveLength(0);
  });
});
