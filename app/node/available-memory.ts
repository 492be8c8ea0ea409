import { freemem, totalmem } from 'node:os';

/**
 * Memory this process can still take: the system's available memory (libuv reads MemAvailable on
 * Linux), lowered to what a cgroup limit leaves when one is set (containers, Slurm jobs).
 */
export function availableMemoryBytes(): number {
  const free = freemem();
  const limit = process.constrainedMemory?.() ?? 0;
  // Unconstrained, Node reports a huge number (2^64 rounded); only a limit below the machine counts.
  if (limit <= 0 || limit >= totalmem()) return free;
  return Math.max(0, Math.min(free, limit - process.memoryUsage.rss()));
}
