import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arrayDifference } from '../../cache/test-support/compare.js';
import { logitsAt, openSyntheticSession, runStep, TOLERANCE, type SyntheticSession } from './test-support/synthetic-session.js';

let hybrid: SyntheticSession;
let plain: SyntheticSession;
beforeAll(async () => {
  [hybrid, plain] = await Promise.all([openSyntheticSession('synthetic-hybrid'), openSyntheticSession('synthetic')]);
});
afterAll(async () => {
  await Promise.all([hybrid?.session.release(), plain?.session.release()]);
});

/** ids 3..511 in a fixed scramble, `length` long */
function sequence(length: number, salt = 0): number[] {
  return Array.from({ length }, (_, i) => 3 + ((i * 193 + 29 + salt * 71) % 509));
}

/** One position's slice [kvHeads, headDim] of a [1, kvHeads, T, headDim] cache tensor. */
function atPosition(data: Float32Array, total: number, headDim: number, position: number): Float32Array {
  const heads = data.length / (total * headDim);
  const out = new Float32Array(heads * headDim);
  for (let h = 0; h < heads; h++) out.set(data.subarray((h * total + position) * headDim, (h * total + position + 1) * headDim), h * headDim);
  return out;
}

describe('synthetic-hybrid: sliding-window layers in the graph agree with config.json', () => {
  it('declares alternating sliding layers with a 128-token window', () => {
    expect(hybrid.geometry.slidingWindow).toBe(128);
    expect(hybrid.geometry.layerTypes).toEqual(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? 'sliding_attention' : 'full_attention')));
  });

  it('is the plain model while the context fits in the window', async () => {
    const ids = sequence(40);
    const [a, b] = await Promise.all([runStep(hybrid, { ids: [ids] }), runStep(plain, { ids: [ids] })]);
    expect(arrayDifference(a.logits, b.logits).maxAbs).toBeLessThan(TOLERANCE.logits);
  });

  it('hides tokens more than the window back from the sliding layers', async () => {
    // Layer 0 slides; layer 1's keys are computed from layer 0's output alone, so key t of layer 1
    // depends on token 0 only if layer 0 let query t see key 0: t - 0 < window.
    const window = 128;
    const length = window + 8;
    const ids = sequence(length);
    const changed = [ids[0] === 100 ? 101 : 100, ...ids.slice(1)];
    const { headDim } = hybrid.geometry;
    const layerOneKeys = async (model: SyntheticSession): Promise<(position: number) => number> => {
      const [a, b] = await Promise.all([runStep(model, { ids: [ids] }), runStep(model, { ids: [changed] })]);
      const keysA = a.present.get('present.1.key')?.data as Float32Array;
      const keysB = b.present.get('present.1.key')?.data as Float32Array;
      return (position) => arrayDifference(atPosition(keysA, length, headDim, position), atPosition(keysB, length, headDim, position)).maxAbs;
    };
    const hybridDifference = await layerOneKeys(hybrid);
    expect(hybridDifference(window - 1)).toBeGreaterThan(1e-3); // the window's oldest query still sees token 0
    expect(hybridDifference(window)).toBe(0); // from here on token 0 is outside every window
    expect(hybridDifference(length - 1)).toBe(0);
    expect((await layerOneKeys(plain))(length - 1)).toBeGreaterThan(1e-3); // full attention sees it
  });

  it('still lets the full-attention layers carry the early context to the logits', async () => {
    const length = 160;
    const ids = sequence(length);
    const changed = [ids[0] === 100 ? 101 : 100, ...ids.slice(1)];
    const [a, b] = await Promise.all([runStep(hybrid, { ids: [ids] }), runStep(hybrid, { ids: [changed] })]);
    const { vocabSize } = hybrid.geometry;
    expect(arrayDifference(logitsAt(a, vocabSize, length, 0, length - 1), logitsAt(b, vocabSize, length, 0, length - 1)).maxAbs).toBeGreaterThan(1e-3);
  });

  it('gives the same logits and cache from one prefill as from prefill + decode across the window edge', async () => {
    const ids = sequence(140, 1);
    const full = await runStep(hybrid, { ids: [ids] });
    let step = await runStep(hybrid, { ids: [ids.slice(0, 120)] });
    step = await runStep(hybrid, { ids: [ids.slice(120, 130)], past: step.present }); // a chunk crossing position 128
    for (const id of ids.slice(130)) step = await runStep(hybrid, { ids: [[id]], past: step.present });
    const { vocabSize } = hybrid.geometry;
    expect(arrayDifference(logitsAt(step, vocabSize, 1, 0, 0), logitsAt(full, vocabSize, ids.length, 0, ids.length - 1)).maxAbs)
      .toBeLessThan(TOLERANCE.logits);
    for (const [name, tensor] of full.present) {
      expect(arrayDifference(step.present.get(name)?.data as Float32Array, tensor.data as Float32Array).maxAbs, name).toBeLessThan(TOLERANCE.kv);
    }
  });
});
