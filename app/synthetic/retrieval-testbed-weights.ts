import type { LlamaWeights } from './llama-weights.js';
import { MUTED_LOGIT } from './llama-weights.js';
import type { SyntheticModelSpec } from './synthetic-spec.js';

/*
 * The retrieval testbed's weights, set by construction (nothing is drawn or trained): a two-layer
 * Llama that is an induction circuit (Olsson et al. 2022, "In-context learning and induction heads").
 *
 * Token k has the code `sign(k)·e_axis(k)`, axis ⌊k/2⌋ and sign + for even k, − for odd: codes of
 * different tokens are orthogonal or opposite, so a match scores exactly 1, 0 or −1.
 *
 * The residual stream [hidden = 5·axes + 1] holds five code slots and a constant:
 *   current  [0, axes)           the token's own code (the embedding)
 *   previous [axes·δ, axes·(δ+1)) for δ = 1, 2, 3: the code of the token δ positions back (layer 0)
 *   copied   [4·axes, 5·axes)    the code of the token the copy head attends to (layer 1)
 *   constant [5·axes]            1 (the embedding), what layer 0's position-only queries and keys read
 *
 * Layer 0, heads δ = 1, 2, 3 (previous-token heads): query and key read only the constant, on the
 * RoPE pairs j < POSITION_PAIRS, the key turned by δ·θ_j, so the score of key position s for query t
 * is POSITION_WEIGHT·Σ_j cos((t − s − δ)·θ_j): highest at s = t − δ, at least 18 lower at any other
 * distance up to 4,096 (checked in the test). The value copies the current slot into previous slot δ.
 *
 * Layer 1, head 0 (the copy head): the query holds the codes of the last three tokens (current,
 * previous 1, previous 2), the key the codes of the three tokens before its position (previous 1, 2
 * and 3), each code axis on its own RoPE pair, the same number on both members of the pair, so a
 * rotation by any angle leaves no cross term: a matching axis scores 2·c²·cos(Δ·θ_j)/√headDim. The
 * pairs are the lowest-frequency ones and rope_theta is 1e20, so over 4,096 positions cos ≥ 0.97. The
 * key at s whose three preceding tokens equal the query's last three scores 3·MATCH_LOGIT (≥ 72), any
 * position that matches two of three at most 2·MATCH_LOGIT = 50: the head attends to the position after
 * the earlier occurrence of the current trigram and its value copies that token's code into `copied`.
 * The LM head reads `copied`: the copied token gets +LOGIT, its opposite −LOGIT, every other 0.
 *
 * Heads 1 and 2 of layer 1 and both MLPs are zero. All norms' weights are 1; RMSNorm's scale is
 * undone with the residual's known norm (2, 5 and 6 units before layers 0, 1 and the head).
 */

/** RoPE pairs layer 0's position heads use, the highest-frequency ones. */
export const POSITION_PAIRS = 8;
/** per pair; the peak is 8·20 = 160 */
export const POSITION_WEIGHT = 20;
/** the score of one matching token in the copy head */
export const MATCH_LOGIT = 25;
/** the copied token's logit */
export const LOGIT = 10;
/**
 * The copy head's keys carry outlier RoPE pairs, OUTLIER_KEY times a code entry, on pairs its query
 * never reads (so full precision is unchanged): trained models' keys have such channels (KIVI,
 * KVQuant), and they set the scale of every quantization group they share with the codes. One pair
 * lies in each half of the low-frequency pairs, so every run of 64 channels holds an outlier.
 * Without them the codes (0 and ±c) are points of any min–max grid and no quantizer would touch
 * retrieval.
 */
export const OUTLIER_KEY = 8;
/** offsets from the first low-frequency pair the copy head uses */
const OUTLIER_OFFSETS = [1, 69] as const;
/** the copy head matches this many tokens: the current one and the two before it */
export const MATCH_TOKENS = 3;

export interface TestbedLayout {
  readonly axes: number;
  readonly hidden: number;
  /** first index of slot: current 0, previous δ (1..3), copied 4 */
  readonly slot: (index: number) => number;
  readonly constant: number;
  /** the RoPE pair of code axis i in match slot g (0 current/previous 1, 1, 2), in the copy head */
  readonly matchPair: (g: number, axis: number) => number;
  /** the copy head's outlier pairs (OUTLIER_KEY) */
  readonly outlierPairs: readonly number[];
}

export function testbedLayout(vocabSize: number, headDim: number): TestbedLayout {
  const axes = Math.ceil(vocabSize / 2);
  const half = headDim / 2;
  const first = half - MATCH_TOKENS * axes - OUTLIER_OFFSETS.length;
  if (first < POSITION_PAIRS) {
    throw new RangeError(`head_dim ${headDim} has ${half} RoPE pairs; the testbed needs ${MATCH_TOKENS}·${axes} + ${OUTLIER_OFFSETS.length} + ${POSITION_PAIRS}`);
  }
  const outlierPairs = OUTLIER_OFFSETS.map((offset) => first + offset);
  // the slots interleaved (axis i of slot g at i·3 + g), so each slot spans every quantization group
  const matchPairs = Array.from({ length: half - first }, (_, i) => first + i).filter((pair) => !outlierPairs.includes(pair));
  return {
    axes,
    hidden: 5 * axes + 1,
    slot: (index) => index * axes,
    constant: 5 * axes,
    matchPair: (g, axis) => matchPairs[axis * MATCH_TOKENS + g]!,
    outlierPairs,
  };
}

export function tokenAxis(token: number): number {
  return Math.floor(token / 2);
}

export function tokenSign(token: number): number {
  return token % 2 === 0 ? 1 : -1;
}

/** HF's inv_freq: θ_j = rope_theta^(−2j/headDim). */
export function ropeFrequency(spec: SyntheticModelSpec, pair: number): number {
  return 1 / spec.ropeTheta ** ((2 * pair) / spec.headDim);
}

export function retrievalTestbedWeights(spec: SyntheticModelSpec, mutedTokenIds: readonly number[]): LlamaWeights {
  const { vocabSize: vocab, headDim, numAttentionHeads: heads } = spec;
  const layout = testbedLayout(vocab, headDim);
  const hidden = layout.hidden;
  if (spec.hiddenSize !== hidden || heads !== 3 || spec.numKeyValueHeads !== 3 || spec.numLayers !== 2) {
    throw new RangeError(`the testbed's geometry is 2 layers, 3 heads, hidden ${hidden}; the spec says ${spec.numLayers}, ${heads}, ${spec.hiddenSize}`);
  }
  const width = heads * headDim;
  const half = headDim / 2;
  // RMSNorm multiplies a residual of n unit entries by √(hidden/n): the weights divide it out
  const normScale = (units: number): number => Math.sqrt(hidden / units);
  const matrix = (rows: number, columns: number) => {
    const data = new Float32Array(rows * columns); // [rows, columns], row-major: [in, out]
    return { data, set: (row: number, column: number, value: number) => { data[row * columns + column] = value; } };
  };

  const embed = matrix(vocab, hidden);
  for (let token = 0; token < vocab; token++) {
    embed.set(token, layout.slot(0) + tokenAxis(token), tokenSign(token));
    embed.set(token, layout.constant, 1);
  }

  // Layer 0: previous-token heads δ = 1, 2, 3
  const s0 = normScale(2);
  const q0 = matrix(hidden, width);
  const k0 = matrix(hidden, width);
  const v0 = matrix(hidden, width);
  const o0 = matrix(width, hidden);
  const amplitude = Math.sqrt(POSITION_WEIGHT * Math.sqrt(headDim)); // q·k/√d = POSITION_WEIGHT per pair
  for (let head = 0; head < 3; head++) {
    const delta = head + 1;
    for (let pair = 0; pair < POSITION_PAIRS; pair++) {
      const angle = delta * ropeFrequency(spec, pair);
      q0.set(layout.constant, head * headDim + pair, amplitude / s0);
      k0.set(layout.constant, head * headDim + pair, (amplitude * Math.cos(angle)) / s0);
      k0.set(layout.constant, head * headDim + half + pair, (amplitude * Math.sin(angle)) / s0);
    }
    for (let axis = 0; axis < layout.axes; axis++) {
      v0.set(layout.slot(0) + axis, head * headDim + axis, 1 / s0);
      o0.set(head * headDim + axis, layout.slot(delta) + axis, 1);
    }
  }

  // Layer 1: the copy head (head 0); heads 1 and 2 stay zero
  const s1 = normScale(5);
  const q1 = matrix(hidden, width);
  const k1 = matrix(hidden, width);
  const v1 = matrix(hidden, width);
  const o1 = matrix(width, hidden);
  const code = Math.sqrt((MATCH_LOGIT * Math.sqrt(headDim)) / 2); // 2·code²/√d = MATCH_LOGIT
  for (let g = 0; g < MATCH_TOKENS; g++) {
    for (let axis = 0; axis < layout.axes; axis++) {
      const pair = layout.matchPair(g, axis);
      for (const dim of [pair, half + pair]) {
        q1.set(layout.slot(g) + axis, dim, code / s1);
        k1.set(layout.slot(g + 1) + axis, dim, code / s1);
      }
    }
  }
  // from the constant, the same in every token's key before RoPE turns it
  for (const pair of layout.outlierPairs) {
    k1.set(layout.constant, pair, (OUTLIER_KEY * code) / s1);
    k1.set(layout.constant, half + pair, (OUTLIER_KEY * code) / s1);
  }
  for (let axis = 0; axis < layout.axes; axis++) {
    v1.set(layout.slot(0) + axis, axis, 1 / s1);
    o1.set(axis, layout.slot(4) + axis, 1);
  }

  const s2 = normScale(6);
  const lmHead = matrix(hidden, vocab);
  for (let token = 0; token < vocab; token++) lmHead.set(layout.slot(4) + tokenAxis(token), token, (tokenSign(token) * LOGIT) / s2);
  const logitBias = new Float32Array(vocab);
  for (const id of mutedTokenIds) logitBias[id] = MUTED_LOGIT;

  const ones = () => new Float32Array(hidden).fill(1);
  const zeroMlp = () => ({
    gateProj: new Float32Array(hidden * spec.intermediateSize),
    upProj: new Float32Array(hidden * spec.intermediateSize),
    downProj: new Float32Array(spec.intermediateSize * hidden),
  });
  const layer = (q: Float32Array, k: Float32Array, v: Float32Array, o: Float32Array) => ({
    inputNorm: ones(), qProj: q, kProj: k, vProj: v, oProj: o, postAttentionNorm: ones(), ...zeroMlp(), outlierKeyChannels: [],
  });
  return {
    embedTokens: embed.data,
    layers: [layer(q0.data, k0.data, v0.data, o0.data), layer(q1.data, k1.data, v1.data, o1.data)],
    finalNorm: ones(),
    lmHead: lmHead.data,
    logitBias,
  };
}
