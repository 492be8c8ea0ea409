import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { parentChannel } from './parent-channel.js';

/** Electron's `process.parentPort` as a utility process has it (absent from Node's types): messages arrive as `{ data }`. */
class FakeParentPort extends EventEmitter {
  readonly posted: unknown[] = [];
  postMessage(message: unknown): void {
    this.posted.push(message);
  }
}

const host = process as { parentPort?: unknown };
afterEach(() => {
  delete host.parentPort;
  delete process.env['KVSCOPE_WORKER_DATA'];
});

describe('the lab worker\'s channel in an Electron utility process (main/electron/utility-process-launch.ts)', () => {
  it('talks over process.parentPort, reads its workerData from the environment (and removes it), and ignores SIGINT only', () => {
    const port = new FakeParentPort();
    host.parentPort = port;
    process.env['KVSCOPE_WORKER_DATA'] = '{"engineModule":"file:///engine.js"}';
    const sigint = process.listeners('SIGINT');
    const sigterm = process.listeners('SIGTERM');
    try {
      const channel = parentChannel()!;
      expect(channel.kind).toBe('process');
      expect(channel.data).toEqual({ engineModule: 'file:///engine.js' });
      expect(process.env['KVSCOPE_WORKER_DATA']).toBeUndefined();
      const received: unknown[] = [];
      channel.onMessage((message) => received.push(message));
      port.emit('message', { data: { type: 'cancel', id: 3 }, ports: [] });
      expect(received).toEqual([{ type: 'cancel', id: 3 }]);
      channel.post({ type: 'ready', protocolVersion: 1 });
      expect(port.posted).toEqual([{ type: 'ready', protocolVersion: 1 }]);
      // SIGTERM stays the default: it is how Electron's kill() ends the worker
      expect(process.listeners('SIGINT')).toHaveLength(sigint.length + 1);
      expect(process.listeners('SIGTERM')).toHaveLength(sigterm.length);
    } finally {
      for (const listener of process.listeners('SIGINT')) if (!sigint.includes(listener)) process.off('SIGINT', listener);
    }
  });
});
