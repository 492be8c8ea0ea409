import type { QuantBackend } from '../quant/types.js';
import type { DiagnosticCode, DiagnosticOrigin } from './diagnostic.js';
import { hqqGroupSizeMessage, quantoGroupSizeMessage } from '../quant/library-messages.js';

/** The fixed dimensions of a cached K or V tensor `[batch, heads, seq, headDim]`. */
export interface KvDims {
  readonly batch: number;
  readonly heads: number;
  readonly headDim: number;
}

export interface ShapeFailure {
  readonly code: DiagnosticCode;
  readonly origin: DiagnosticOrigin;
  /** the library's exact text where it has one (spec §3.1, §3.2), else kvscope's */
  readonly text: string;
  /** the arithmetic, e.g. `B·H·S = 1·4·37 = 148` */
  readonly detail: string;
}

/**
 * A condition one backend puts on a KV tensor at every quantize call: some count of values,
 * `perPosition · S`, must be a multiple of `modulus` (and at least the group size).
 */
export interface ShapeRule {
  /** e.g. `quanto axis -1` */
  readonly label: string;
  /** what is grouped, e.g. `B·H·S token rows (1·4·S)` */
  readonly grouping: string;
  readonly perPosition: number;
  readonly modulus: number;
  readonly groupSize: number;
  /** kvscope extension --sink-tokens: tokens in front that are never quantized (absent: 0) */
  readonly sinkTokens?: number;
  check(seq: number): ShapeFailure | null;
}

/** Rows of codes per packed byte row for HQQ's block-planar packing (spec §3.2 step 4); 1 where unconstrained. */
export function hqqPackingFactor(nbits: number): number {
  if (nbits === 4) return 2;
  if (nbits === 2) return 4;
  if (nbits === 1) return 8;
  return 1;
}

export function quantizeShapeRule(backend: QuantBackend, axis: number, nbits: number, groupSize: number, dims: KvDims): ShapeRule {
  if (backend === 'quanto') return axis === -1 ? quantoChannelRule(groupSize, dims) : quantoTokenRule(groupSize, dims);
  return hqqRule(axis, nbits, groupSize, dims);
}

/** quanto axis -1: `axis_numel = B·H·S` token rows per channel must be a multiple of g (spec §3.1 step 1). */
function quantoChannelRule(groupSize: number, { batch, heads }: KvDims): ShapeRule {
  return {
    label: 'quanto axis -1',
    grouping: `B·H·S token rows per channel (${batch}·${heads}·S)`,
    perPosition: batch * heads,
    modulus: groupSize,
    groupSize,
    check: (seq) => quantoCheck(groupSize, batch * heads * seq, `B·H·S = ${batch}·${heads}·${seq} = ${batch * heads * seq}`),
  };
}

/** quanto axis 0: `axis_numel = H·S·D` values per batch row must be a multiple of g (spec §3.1 step 1). */
function quantoTokenRule(groupSize: number, { heads, headDim }: KvDims): ShapeRule {
  return {
    label: 'quanto axis 0',
    grouping: `H·S·D values per batch row (${heads}·S·${headDim})`,
    perPosition: heads * headDim,
    modulus: groupSize,
    groupSize,
    check: (seq) => quantoCheck(groupSize, heads * seq * headDim, `H·S·D = ${heads}·${seq}·${headDim} = ${heads * seq * headDim}`),
  };
}

function quantoCheck(groupSize: number, axisNumel: number, detail: string): ShapeFailure | null {
  if (axisNumel < groupSize) return { code: 'group-larger-than-tensor', origin: 'backend', text: quantoGroupSizeMessage(groupSize, axisNumel), detail };
  if (axisNumel % groupSize !== 0) return { code: 'quanto-group-size-divisor', origin: 'backend', text: quantoGroupSizeMessage(groupSize, axisNumel), detail };
  return null;
}

/**
 * HQQ: the element count N = B·H·S·D must be a multiple of g (its `is_divisible` assertion), and on
 * axis 1 the N/g rows of codes must split evenly into the packing planes (spec §3.2 step 4).
 */
function hqqRule(axis: number, nbits: number, groupSize: number, { batch, heads, headDim }: KvDims): ShapeRule {
  const planes = axis === 1 ? hqqPackingFactor(nbits) : 1;
  return {
    label: `hqq axis ${axis}`,
    grouping: `N = B·H·S·D values (${batch}·${heads}·S·${headDim})${planes > 1 ? ` in N/g rows, a multiple of ${planes} for ${nbits}-bit packing` : ''}`,
    perPosition: batch * heads * headDim,
    modulus: groupSize * planes,
    groupSize,
    check: (seq) => {
      const count = batch * heads * seq * headDim;
      const shape = [batch, heads, seq, headDim];
      const detail = `N = ${shape.join('·')} = ${count}`;
      if (count < groupSize) return { code: 'group-larger-than-tensor', origin: 'backend', text: hqqGroupSizeMessage(shape, groupSize), detail };
      if (count % groupSize !== 0) return { code: 'hqq-group-size-divisor', origin: 'backend', text: hqqGroupSizeMessage(shape, groupSize), detail };
      const rows = count / groupSize;
      if (rows % planes === 0) return null;
      return {
        code: 'hqq-bitpack-rows',
        origin: 'backend',
        text: `HQQ ${nbits}-bit packing on axis 1 needs the N/g = ${count}/${groupSize} = ${rows} rows of codes to be a multiple of ${planes}; ` +
          'otherwise the packing shapes mismatch and torch raises a RuntimeError.',
        detail: `N/g = ${rows}`,
      };
    },
  };
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** The sequence lengths S that pass are exactly the multiples of this (perPosition·S ≡ 0 mod modulus). */
export function requiredMultiple(rule: ShapeRule): number {
  return rule.modulus / gcd(rule.modulus, rule.perPosition);
}
