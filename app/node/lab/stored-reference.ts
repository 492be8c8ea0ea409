import { computeReference, computeReferenceWindow, type EvalHooks, type EvalModel } from '../../lab/evaluate.js';
import type { ReferenceSource, WindowReference } from '../../lab/reference-source.js';
import { scoredRows, type EvalWindow } from '../../lab/windows.js';
import type { ReferenceEntry } from './reference-store.js';

/** An evaluation's reference, ready to read: what was computed now, and what had to be mended. */
export interface PreparedReference {
  /** reads each window from disk, verified; a window that fails its check is computed again (and noted) */
  readonly source: ReferenceSource;
  /** windows this evaluation computed before scoring (0: all came from the cache) */
  readonly windowsComputed: number;
  /** one line per window discarded and computed again, filled in as the evaluation reads */
  readonly notes: string[];
}

/**
 * Makes sure every window of `windows` is in `entry`: the missing ones are computed one at a time,
 * each written before the next (so a 100-window reference never sits in memory), then the windows
 * are read back one at a time as the evaluation asks for them. Each read checks the window's sha256
 * (reference-window-file.ts); a window that fails is removed, computed again from `model` (the
 * source graph's session stays open for the whole evaluation) and stored, and one line says so.
 */
export async function prepareReference(entry: ReferenceEntry, model: EvalModel, windows: readonly EvalWindow[], hooks: EvalHooks): Promise<PreparedReference> {
  const missing = windows.filter((window) => !entry.has(window.index));
  await computeReference(model, missing, hooks, (window, reference) => {
    entry.write(window.index, reference);
  });
  const notes: string[] = [];
  const byIndex = new Map(windows.map((window) => [window.index, window]));
  const source: ReferenceSource = {
    windows: windows.length,
    window: async (index): Promise<WindowReference> => {
      const window = byIndex.get(index);
      if (window === undefined) throw new RangeError(`the evaluation has no window ${index + 1}`);
      const read = entry.read(index, scoredRows(window));
      if (read.ok) return read.window;
      notes.push(`reference window ${index + 1} ${read.reason === 'missing' ? 'was removed from the cache meanwhile' : `failed its check (${read.reason})`}: discarded and computed again.`);
      const computed = await computeReferenceWindow(model, window, hooks);
      entry.write(index, computed);
      return computed;
    },
  };
  return { source, windowsComputed: missing.length, notes };
}
