import type { SweepRow } from './sweep-results.js';

/**
 * A sweep's best mean KLD and top-1 agreement among its measured quantized points. The dynamic
 * cache is the reference itself (KLD 0, top-1 100 % by construction), so counting it would make
 * every sweep that scored it look perfect; null when no quantized point was measured.
 */
export function sweepBest(rows: readonly Pick<SweepRow, 'settings' | 'result'>[]): { readonly bestKld: number | null; readonly bestTop1: number | null } {
  const measured = rows.filter((row) => row.result !== null && row.settings !== null && row.settings.cacheMode !== 'dynamic');
  if (measured.length === 0) return { bestKld: null, bestTop1: null };
  return {
    bestKld: Math.min(...measured.map((row) => row.result!.kldMean)),
    bestTop1: Math.max(...measured.map((row) => row.result!.top1Agreement)),
  };
}
