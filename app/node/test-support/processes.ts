/** Test helpers for the processes a test started or watches (Linux /proc where noted). */

/** Whether process `pid` exists (signal 0 checks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
