/**
 * Where a quantized layer's tokens sit after a prefill and `steps` single-token updates: in the
 * store or in the full-precision residual. The closed form of the §1.3 state machine that
 * app/cache/flush-schedule.ts runs step by step (a 1M-token context is then one division, not a
 * million rows): after the prefill or a flush the residual is a 1-D empty tensor, the next update
 * makes it 4-D with one token, and an update flushes when `residual + 1 >= R`; so every
 * P = max(R, 2) updates end in a flush (flushSchedule's `flushSteps` are P, 2P, …).
 */
export interface FlushState {
  readonly storeTokens: number;
  readonly residualTokens: number;
  /** flushes during the `steps` updates */
  readonly flushes: number;
}

export function flushState(prefillTokens: number, residualLength: number, steps: number): FlushState {
  const period = Math.max(residualLength, 2);
  const flushes = Math.floor(steps / period);
  return { storeTokens: prefillTokens + flushes * period, residualTokens: steps - flushes * period, flushes };
}
