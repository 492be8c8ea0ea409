import { readFileSync } from 'node:fs';

/**
 * Samples another process's proportional set size (Linux `/proc/PID/smaps_rollup`, `Pss:`) every
 * `intervalMs` and keeps the largest. PSS counts a page shared by several mappings once in all (a
 * share to each), where RSS and ru_maxrss count it once per mapping: a sweep's jobs each map the
 * model's external data, so their RSS counts the same page-cache pages once per job while PSS
 * counts the memory the process really holds (issue 23). A peak between two samples can be missed,
 * so it is a lower bound of the true peak; the kernel has no high-water mark for PSS.
 */
export class PssSampler {
  #peakBytes: number | null = null;
  readonly #timer: NodeJS.Timeout;
  readonly #path: string;

  constructor(pid: number, intervalMs = 100) {
    this.#path = `/proc/${pid}/smaps_rollup`;
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), intervalMs);
  }

  /** Stops sampling; the peak PSS seen in bytes, or null where none could be read (not Linux, or the process had gone). */
  stop(): number | null {
    clearInterval(this.#timer);
    return this.#peakBytes;
  }

  #sample(): void {
    let text: string;
    try {
      text = readFileSync(this.#path, 'utf8');
    } catch {
      return;
    }
    const kib = /^Pss:\s+(\d+) kB/m.exec(text);
    if (kib === null) return;
    const bytes = Number(kib[1]) * 1024;
    if (this.#peakBytes === null || bytes > this.#peakBytes) this.#peakBytes = bytes;
  }
}
