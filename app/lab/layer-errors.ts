import type { ErrorStats } from '../quant/error-stats.js';
import type { FlushMetrics } from '../engine/types.js';

/** One side's quantization error over every quantize event (prefill and flushes) of a layer. */
export interface SideErrorSummary {
  /** mean over events of ‖x − x̂‖_F / ‖x‖_F */
  readonly relFroErrMean: number;
  readonly relFroErrMax: number;
  /** mean over events of the mean |x − x̂| */
  readonly meanAbsErrMean: number;
  readonly maxAbsErr: number;
  /** mean over events of the SNR in dB (events with an exact reconstruction left out) */
  readonly snrDbMean: number | null;
}

/** Per-layer K/V error statistics of an evaluation; keys or values are null where that side is not quantized. */
export interface LayerErrorSummary {
  readonly layer: number;
  readonly events: number;
  readonly key: SideErrorSummary | null;
  readonly value: SideErrorSummary | null;
}

interface SideSums { events: number; relFro: number; relFroMax: number; meanAbs: number; maxAbs: number; snr: number; snrEvents: number }

/** Accumulates the quantize events the lanes report (AbsorbResult.flushes) into per-layer statistics. */
export class LayerErrorAccumulator {
  readonly #layers = new Map<number, { key: SideSums; value: SideSums }>();

  add(events: readonly FlushMetrics[]): void {
    for (const event of events) {
      let sums = this.#layers.get(event.layer);
      if (sums === undefined) {
        sums = { key: emptySums(), value: emptySums() };
        this.#layers.set(event.layer, sums);
      }
      addSide(sums.key, event.key);
      addSide(sums.value, event.value);
    }
  }

  /** By layer, ascending; `quantized` says which sides were really quantized (the others' stats are dropped). */
  summary(quantized: (layer: number) => { key: boolean; value: boolean } = () => ({ key: true, value: true })): LayerErrorSummary[] {
    return [...this.#layers.entries()].sort(([a], [b]) => a - b).map(([layer, sums]) => {
      const sides = quantized(layer);
      return { layer, events: sums.key.events, key: sides.key ? sideSummary(sums.key) : null, value: sides.value ? sideSummary(sums.value) : null };
    });
  }
}

function emptySums(): SideSums {
  return { events: 0, relFro: 0, relFroMax: 0, meanAbs: 0, maxAbs: 0, snr: 0, snrEvents: 0 };
}

function addSide(sums: SideSums, stats: ErrorStats): void {
  sums.events++;
  sums.relFro += stats.relFroErr;
  sums.relFroMax = Math.max(sums.relFroMax, stats.relFroErr);
  sums.meanAbs += stats.meanAbsErr;
  sums.maxAbs = Math.max(sums.maxAbs, stats.maxAbsErr);
  if (Number.isFinite(stats.snrDb)) {
    sums.snr += stats.snrDb;
    sums.snrEvents++;
  }
}

function sideSummary(sums: SideSums): SideErrorSummary {
  const n = Math.max(1, sums.events);
  return {
    relFroErrMean: sums.relFro / n,
    relFroErrMax: sums.relFroMax,
    meanAbsErrMean: sums.meanAbs / n,
    maxAbsErr: sums.maxAbs,
    snrDbMean: sums.snrEvents === 0 ? null : sums.snr / sums.snrEvents,
  };
}
