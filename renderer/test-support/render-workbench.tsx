import { act, render, type RenderResult } from '@testing-library/react';
import { App } from '../App.js';
import { WorkbenchController } from '../controller/workbench-controller.js';
import { FrameLoop, type FrameClock } from '../metrics/frame-loop.js';
import { createWorkbenchStore, type WorkbenchStore } from '../store/workbench-store.js';
import { createFakeWorkbenchApi, type FakeApiOptions, type FakeWorkbenchApi } from './fake-workbench-api.js';
import { ManualScheduler } from './manual-scheduler.js';

/** Animation frames that run only when a test calls `tick`. */
export class ManualFrames implements FrameClock {
  #callbacks = new Map<number, (now: number) => void>();
  #next = 1;
  #now = 0;
  request(callback: (now: number) => void): number {
    const id = this.#next++;
    this.#callbacks.set(id, callback);
    return id;
  }
  cancel(handle: number): void {
    this.#callbacks.delete(handle);
  }
  now(): number {
    return this.#now;
  }
  /** Advances the clock and runs the frame callbacks waiting for it. */
  tick(ms = 1000): void {
    this.#now += ms;
    const due = [...this.#callbacks.values()];
    this.#callbacks.clear();
    for (const callback of due) callback(this.#now);
  }
}

export interface RenderedWorkbench extends RenderResult {
  readonly api: FakeWorkbenchApi;
  readonly store: WorkbenchStore;
  readonly controller: WorkbenchController;
  readonly frames: FrameLoop;
  readonly clock: ManualFrames;
  readonly scheduler: ManualScheduler;
  /** runs the fake engine's timers and React's updates until both are idle */
  settle(limit?: number): Promise<void>;
  /** runs `count` animation frames */
  frame(count?: number): void;
}

/** The whole workbench on the fake engine, with manual timers and frames. */
export async function renderWorkbench(options: FakeApiOptions = {}): Promise<RenderedWorkbench> {
  const scheduler = new ManualScheduler();
  const api = createFakeWorkbenchApi({ scheduler, stepsPerBatch: 8, ...options });
  const store = createWorkbenchStore(api.host);
  const controller = new WorkbenchController(api, store, { preflightDelayMs: 0, timers: scheduler, download: () => undefined });
  const clock = new ManualFrames();
  const frames = new FrameLoop(1000, clock);
  const result = render(<App services={{ store, controller, frames }} />);
  const settle = async (limit?: number): Promise<void> => {
    await act(async () => {
      await scheduler.runAll(limit);
    });
  };
  const frame = (count = 1): void => {
    act(() => {
      for (let i = 0; i < count; i++) clock.tick(1000);
    });
  };
  const start = controller.start();
  await settle();
  await act(async () => {
    await start;
  });
  await settle();
  return { ...result, api, store, controller, frames, clock, scheduler, settle, frame };
}
