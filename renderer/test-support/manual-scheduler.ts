import type { FakeScheduler } from './fake-workbench-api.js';

/** Timers that run only when a test says so: the fake engine's stream, step by step. */
export class ManualScheduler implements FakeScheduler {
  #queue: { id: number; callback: () => void }[] = [];
  #next = 1;

  setTimeout(callback: () => void): unknown {
    const id = this.#next++;
    this.#queue.push({ id, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#queue = this.#queue.filter((timer) => timer.id !== handle);
  }

  get pending(): number {
    return this.#queue.length;
  }

  /** Runs timers (and the promise jobs they start) until none is left, or `limit` timers ran. */
  async runAll(limit = 100_000): Promise<number> {
    let ran = 0;
    await flushMicrotasks();
    while (this.#queue.length > 0 && ran < limit) {
      this.#queue.shift()!.callback();
      ran++;
      await flushMicrotasks();
    }
    return ran;
  }
}

export async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}
