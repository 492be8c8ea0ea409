import type { ProcessMemory } from './types.js';

const NO_MEMORY: ProcessMemory = { rssBytes: 0, externalBytes: 0, arrayBuffersBytes: 0 };

/**
 * Process memory for the step metrics. The pure engine cannot read it (no `process`), so the host
 * passes a sampler in; reading it costs tens of microseconds (rss comes from the OS), so it is sampled
 * at most every `intervalMs` and the last sample is repeated in between, keeping metrics off the
 * decode loop's critical path.
 */
export class ThrottledMemorySampler {
  readonly #sample: (() => ProcessMemory) | undefined;
  readonly #now: () => number;
  readonly #intervalMs: number;
  #last: ProcessMemory = NO_MEMORY;
  #lastAt = -Infinity;

  constructor(sample: (() => ProcessMemory) | undefined, now: () => number, intervalMs = 50) {
    this.#sample = sample;
    this.#now = now;
    this.#intervalMs = intervalMs;
  }

  read(force = false): ProcessMemory {
    if (this.#sample === undefined) return NO_MEMORY;
    const now = this.#now();
    if (force || now - this.#lastAt >= this.#intervalMs) {
      this.#last = this.#sample();
      this.#lastAt = now;
    }
    return this.#last;
  }
}
