import type { ProcessMemory } from './types.js';

const NO_MEMORY: ProcessMemory = { rssBytes: 0, externalBytes: 0, arrayBuffersBytes: 0 };

/**
 * Process memory for the step metrics. The pure engine cannot read it (no `process`), so the host
 * passes a sampler in. Reading rss costs about 10 µs in an idle process but 0.1-1.3 ms on average in
 * the middle of a decode (measured on the 2-core machines: /proc/self/stat contends with ORT's
 * threads, up to 6 ms at worst), so it is sampled at most every `intervalMs` and the last sample is
 * repeated in between, keeping metrics off the decode loop's critical path (at 50 ms it cost stories260k
 * 1-2% of its decode speed).
 */
export class ThrottledMemorySampler {
  readonly #sample: (() => ProcessMemory) | undefined;
  readonly #now: () => number;
  readonly #intervalMs: number;
  #last: ProcessMemory = NO_MEMORY;
  #lastAt = -Infinity;

  constructor(sample: (() => ProcessMemory) | undefined, now: () => number, intervalMs = 250) {
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
