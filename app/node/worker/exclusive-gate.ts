/**
 * A first-come queue for one resource. onnxruntime-node segfaults when two worker threads create
 * WebGPU sessions at once (shared/reference/toolchain.md §3c), so WebGPU runs pass through one gate
 * per process and each holds it until its worker thread has exited, not merely finished.
 */
export class ExclusiveGate {
  private tail: Promise<void> = Promise.resolve();
  private holders = 0;

  /** Resolves with a release function once every earlier holder has released. Release is idempotent. */
  acquire(): Promise<() => void> {
    this.holders++;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      let done = false;
      release = () => {
        if (done) return;
        done = true;
        this.holders--;
        resolve();
      };
    });
    const ready = this.tail.then(() => release);
    this.tail = this.tail.then(() => released);
    return ready;
  }

  /** Holders and waiters together: 0 when a new acquire would pass at once. */
  get pending(): number {
    return this.holders;
  }
}

/** The process's one WebGPU gate. */
export const webgpuGate = new ExclusiveGate();
