import { readdirSync, readFileSync } from 'node:fs';

/**
 * Samples a process TREE from outside (Linux /proc) every `intervalMs`: the process, and every process
 * it started and their own (a sweep's job processes), and keeps two peaks.
 * - PSS, summed over the tree (`/proc/PID/smaps_rollup`, `Pss:`): PSS counts a page shared by several
 *   mappings once in all (a share to each), where RSS counts it once per mapping, so the sum is the
 *   memory the whole tree really holds (issue 23: a sweep's jobs each map the model's external data and
 *   share its page-cache pages). A peak between two samples can be missed: a lower bound.
 * - the largest process's peak RSS (`VmHWM` in `/proc/PID/status`, the kernel's high-water mark, so a
 *   sample at any time after a process's peak reads it): what `/usr/bin/time -v` reports as a tree's
 *   "Maximum resident set size" (the largest of the process and its reaped descendants). A process that
 *   exits less than one interval after its peak may be missed; the root reports its own (ru_maxrss).
 */
export class ProcessTreeSampler {
  #peakPssBytes: number | null = null;
  #largestPeakRssBytes = 0;
  readonly #seen = new Set<number>();
  readonly #timer: NodeJS.Timeout;

  constructor(private readonly root: number, intervalMs = 100) {
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), intervalMs);
  }

  /** Stops sampling and returns what it saw (peakPssBytes null where no PSS could be read: not Linux, or the tree had gone). */
  stop(): TreeMemory {
    clearInterval(this.#timer);
    return { peakPssBytes: this.#peakPssBytes, largestPeakRssBytes: this.#largestPeakRssBytes, processes: this.#seen.size };
  }

  #sample(): void {
    let pss = 0;
    let read = false;
    for (const pid of processTree(this.root)) {
      const status = readProc(pid, 'status');
      const rollup = readProc(pid, 'smaps_rollup');
      if (status === null || rollup === null) continue;
      this.#seen.add(pid);
      const hwm = kibField(status, 'VmHWM');
      if (hwm !== null) this.#largestPeakRssBytes = Math.max(this.#largestPeakRssBytes, hwm);
      const each = kibField(rollup, 'Pss');
      if (each === null) continue;
      pss += each;
      read = true;
    }
    if (read && (this.#peakPssBytes === null || pss > this.#peakPssBytes)) this.#peakPssBytes = pss;
  }
}

/** What a ProcessTreeSampler saw of a tree. */
export interface TreeMemory {
  /** the largest sum of the tree's PSS at one sample */
  readonly peakPssBytes: number | null;
  /** the largest VmHWM of any process of the tree (0 where none was read) */
  readonly largestPeakRssBytes: number;
  /** how many processes the tree had in all (the root included) */
  readonly processes: number;
}

/** `root` and its descendants now alive (each thread's `children` file lists the processes that thread started). */
function processTree(root: number): number[] {
  const tree: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    tree.push(pid);
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      const children = readProc(pid, `task/${task}/children`);
      if (children === null) continue;
      for (const child of children.split(/\s+/)) if (child !== '') queue.push(Number(child));
    }
  }
  return tree;
}

function readProc(pid: number, file: string): string | null {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return null;
  }
}

function kibField(text: string, field: string): number | null {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return match === null ? null : Number(match[1]) * 1024;
}
