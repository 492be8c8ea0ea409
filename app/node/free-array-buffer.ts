import { MessageChannel, type MessagePort } from 'node:worker_threads';

/**
 * Frees an ArrayBuffer's memory now rather than at a later garbage collection: the buffer is detached
 * (its byteLength becomes 0, every view of it empty) and its backing store released at once, which
 * also takes it off V8's external-memory account (see app/engine/output-release.ts for why that
 * matters). ES2024's `ArrayBuffer.prototype.transfer(0)` does exactly this where the engine has it
 * (Electron's Node); Node 20 does not, so there the buffer is transferred in a message to a closed
 * port, which detaches it and drops the message, with its backing store, on the spot.
 *
 * Only for buffers nothing else uses: a caller that frees a view's buffer frees every view of it.
 * SharedArrayBuffers, empty buffers and buffers that cannot be detached are left alone; it never throws.
 */
type Transferable = ArrayBuffer & { transfer?: (length?: number) => ArrayBuffer };

let closedPort: MessagePort | null = null;

export function freeArrayBuffer(buffer: ArrayBufferLike): void {
  if (!(buffer instanceof ArrayBuffer) || buffer.byteLength === 0) return;
  const transferable = buffer as Transferable;
  try {
    if (typeof transferable.transfer === 'function') {
      transferable.transfer(0);
      return;
    }
    closedPort ??= openClosedPort();
    closedPort.postMessage(null, [buffer]);
  } catch {
    // A buffer its creator made non-detachable stays as it is: the garbage collector frees it later,
    // as it would have without this. Freeing early is an optimisation, never a reason to fail a run.
  }
}

function openClosedPort(): MessagePort {
  const { port1, port2 } = new MessageChannel();
  port2.close();
  port1.close();
  return port1;
}
