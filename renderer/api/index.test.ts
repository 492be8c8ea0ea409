import { describe, expect, it } from 'vitest';
import type { KvscopeBridge } from '../../app/protocol/kvscope-bridge.js';
import { selectWorkbenchApi } from './index.js';
import type { WebSocketLike } from './websocket-api.js';

describe('selectWorkbenchApi', () => {
  it('uses the Electron preload when it is there', () => {
    const api = selectWorkbenchApi({ kvscope: { host: 'electron' } as KvscopeBridge, location: { protocol: 'http:', host: 'x', search: '' } });
    expect(api.host).toBe('electron');
  });

  it('otherwise connects to the serve host that served the page, with the page token', async () => {
    const opened: string[] = [];
    class FakeSocket implements WebSocketLike {
      readyState = 0;
      private readonly listeners = new Map<string, (event: { readonly data: unknown }) => void>();
      constructor(url: string) {
        opened.push(url);
        queueMicrotask(() => this.listeners.get('close')?.({ data: undefined }));
      }
      send(): void {}
      close(): void {}
      addEventListener(type: string, listener: (event: { readonly data: unknown }) => void): void {
        this.listeners.set(type, listener);
      }
    }
    const api = selectWorkbenchApi({ location: { protocol: 'http:', host: '127.0.0.1:4310', search: '?token=a%2Bb' }, WebSocket: FakeSocket });
    expect(api.host).toBe('browser');
    await expect(api.listRuns()).rejects.toMatchObject({ code: 'unauthorized' });
    expect(opened).toEqual(['ws://127.0.0.1:4310/api?token=a%2Bb']);
  });

  it('explains a page opened without a host', () => {
    expect(() => selectWorkbenchApi({ location: { protocol: 'file:', host: '', search: '' } })).toThrow(/kvscope serve/);
  });
});
