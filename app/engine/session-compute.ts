/**
 * How a run's or an evaluation's session computed, beyond its settings: two choices kvscope makes
 * that change which graph runs or the last bits of its numbers, said in the record (issue 23).
 * Absent in records from before it was recorded.
 */
export interface SessionCompute {
  /**
   * how the session computes only the logits rows that are read (LogitsRowsSupport, app/model-layout/logits-rows-support.ts):
   * `input` the graph takes num_logits_to_keep; `derived` a graph derived from it that takes it ran instead
   * (the same bits as the source's rows); `every-row` the source graph ran, every fed row's logits computed
   */
  readonly logitsRows: LogitsRowsMode;
  /**
   * ORT's weight prepacking: true by default; false in a sweep's jobs, whose sessions read the weights
   * in place (app/node/ort/ort-decoder-session.ts SessionSharing), which moves the last bits of the logits
   */
  readonly prepacked: boolean;
}

export const LOGITS_ROWS_MODES = ['input', 'derived', 'every-row'] as const;
export type LogitsRowsMode = (typeof LOGITS_ROWS_MODES)[number];

/** The line a text report shows where the session computed otherwise than `kvscope eval`/`run` by default, else null. */
export function sessionComputeNote(session: SessionCompute | undefined): string | null {
  if (session === undefined || session.prepacked) return null;
  return 'weights not prepacked (sweep job): figures may differ from `kvscope eval` in their last digits';
}
