/**
 * When a `QuantizedLayer` flushes (spec §1.3). The test is transformers' literal
 * `self.keys.dim() == 4 and self.keys.shape[-2] + 1 >= self.residual_length`: the residual must exist
 * as a 4-D tensor (it is a 1-D empty tensor after the prefill and after every flush) and is measured
 * BEFORE the new tokens are appended, with `+ 1` whatever their number.
 */
export function shouldFlush(residualIs4d: boolean, residualTokens: number, residualLength: number): boolean {
  return residualIs4d && residualTokens + 1 >= residualLength;
}

/** One row of the §1.9 worked-trace table. */
export interface ScheduleRow {
  /** 0 = prefill, t = t-th update after it */
  readonly step: number;
  /** tokens fed in this update */
  readonly tokens: number;
  /** `cumulative_length` after the update, = the returned sequence length */
  readonly cumulativeLength: number;
  readonly flush: boolean;
  readonly storeTokens: number;
  /** 0 both for the 1-D empty residual and for a 4-D residual of 0 tokens */
  readonly residualTokens: number;
}

export interface FlushSchedule {
  /** prefill row first, then one row per update */
  readonly rows: readonly ScheduleRow[];
  /** the steps that flush; with one token per step these are max(R, 2)·k (spec §1.3, consequence 2) */
  readonly flushSteps: readonly number[];
}

/**
 * Predicts the store/residual bookkeeping of a prefill followed by `steps` updates of
 * `tokensPerStep` tokens each, by running the §1.3 state machine without tensors.
 */
export function flushSchedule(prefillLength: number, residualLength: number, steps: number, tokensPerStep: number): FlushSchedule {
  const rows: ScheduleRow[] = [
    { step: 0, tokens: prefillLength, cumulativeLength: prefillLength, flush: false, storeTokens: prefillLength, residualTokens: 0 },
  ];
  const flushSteps: number[] = [];
  let cumulative = prefillLength;
  let storeTokens = prefillLength;
  let residualIs4d = false;
  let residualTokens = 0;
  for (let step = 1; step <= steps; step++) {
    cumulative += tokensPerStep;
    const flush = shouldFlush(residualIs4d, residualTokens, residualLength);
    if (flush) {
      storeTokens = cumulative;
      residualIs4d = false;
      residualTokens = 0;
      flushSteps.push(step);
    } else {
      residualIs4d = true;
      residualTokens += tokensPerStep;
    }
    rows.push({ step, tokens: tokensPerStep, cumulativeLength: cumulative, flush, storeTokens, residualTokens });
  }
  return { rows, flushSteps };
}
