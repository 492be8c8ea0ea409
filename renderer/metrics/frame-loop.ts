/** Work done on animation frames: a chart pulling its latest batch, a live figure updating its text. */
export interface FrameTask {
  /** Called once per frame while registered; returns true when it drew something. */
  run(now: number): boolean;
}

export interface FrameClock {
  request(callback: (now: number) => void): number;
  cancel(handle: number): void;
  now(): number;
}

const browserClock: FrameClock = {
  request: (callback) => requestAnimationFrame(callback),
  cancel: (handle) => cancelAnimationFrame(handle),
  now: () => performance.now(),
};

/**
 * One requestAnimationFrame loop for the whole UI. Tasks run round-robin within a per-frame budget,
 * so ten charts redrawing at once spread over a few frames instead of making one frame long: the UI
 * keeps its frame rate while 10,000 steps stream in.
 */
export class FrameLoop {
  readonly #tasks: FrameTask[] = [];
  #cursor = 0;
  #handle: number | null = null;
  /** frames run so far (the fps probe in the status bar reads it) */
  frames = 0;

  constructor(private readonly budgetMs = 8, private readonly clock: FrameClock = browserClock) {}

  add(task: FrameTask): () => void {
    this.#tasks.push(task);
    this.#schedule();
    return () => {
      const index = this.#tasks.indexOf(task);
      if (index >= 0) this.#tasks.splice(index, 1);
      if (this.#cursor > index) this.#cursor--;
      if (this.#tasks.length === 0 && this.#handle !== null) {
        this.clock.cancel(this.#handle);
        this.#handle = null;
      }
    };
  }

  get taskCount(): number {
    return this.#tasks.length;
  }

  /** Runs one frame now (tests drive the loop by hand). */
  tick(now: number): void {
    this.#handle = null;
    this.frames++;
    const started = this.clock.now();
    const count = this.#tasks.length;
    for (let visited = 0; visited < count && this.#tasks.length > 0; visited++) {
      if (this.#cursor >= this.#tasks.length) this.#cursor = 0;
      const task = this.#tasks[this.#cursor++]!;
      task.run(now);
      if (this.clock.now() - started > this.budgetMs) break;
    }
    this.#schedule();
  }

  #schedule(): void {
    if (this.#handle !== null || this.#tasks.length === 0) return;
    this.#handle = this.clock.request((now) => this.tick(now));
  }
}
