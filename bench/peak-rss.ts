import { writeFileSync } from 'node:fs';

/**
 * Resets the process's peak resident set (Linux ≥ 4.0: `5` to /proc/self/clear_refs sets VmHWM,
 * and with it getrusage's ru_maxrss, to the current RSS), so the next ru_maxrss reading is the
 * peak of what ran since, however high the process had been before (model loading, warm-up).
 * false where the kernel offers no reset (macOS, a locked-down /proc): then ru_maxrss growth is all
 * a bench can read, and it sees only what rises above the earlier peak.
 */
export function resetPeakRss(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

/** The process's peak RSS so far, in bytes (getrusage reports KiB on Linux): since the last reset, where there was one. */
export function peakRssBytes(): number {
  return process.resourceUsage().maxRSS * 1024;
}
