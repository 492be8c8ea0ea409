/**
 * The full-precision side of an evaluation: per window, the dynamic cache's logits rows for the
 * scored positions (prefill … context − 2), in float32 exactly as the graph returned them. From them
 * the log-sum-exp, the top-1, the true token's log-probability and the exact KL all follow, so the
 * reference is computed once per model graph, text and windows, and every evaluation of a sweep
 * reads it (app/node/lab/reference-store.ts keeps it on disk by content hash).
 */
export interface WindowReference {
  /** `[scoredRows, vocab]` */
  readonly logits: Float32Array;
  readonly vocab: number;
}

export interface ReferenceSource {
  readonly windows: number;
  window(index: number): Promise<WindowReference>;
  /**
   * The window's logits row by row as the evaluation scores them, where the reference recomputes them
   * (the compact form: the LM head a few rows at a time), so its whole logits are never held; null
   * where `window` is to be read instead.
   */
  rows?(index: number): Promise<ReferenceRows | null>;
}

/** A window's reference logits, computed a few rows at a time as they are asked for. */
export interface ReferenceRows {
  /** `[vocab]`: scored row `scored`'s logits, asked in increasing order; valid until the next call */
  row(scored: number): Promise<Float32Array>;
  /** after the window: whether its rows were the ones stored (their sha256; the rows not asked are computed for it) */
  verified(): Promise<boolean>;
}

/** A reference held in memory (tests, and a reference just computed). */
export function memoryReference(windows: readonly WindowReference[]): ReferenceSource {
  return {
    windows: windows.length,
    window: async (index) => {
      const window = windows[index];
      if (window === undefined) throw new RangeError(`the reference has ${windows.length} windows, not ${index + 1}`);
      return window;
    },
  };
}
