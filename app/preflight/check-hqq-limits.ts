import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { BackendRules } from '../quant/backend-rules.js';
import { isPositiveInteger } from './check-cache-arguments.js';
import type { Diagnostic } from './diagnostic.js';
import { hqqPackingFactor } from './shape-rules.js';

/**
 * HQQ failures that do not depend on the sequence length (spec §3.2 step 4 and the 3-bit note):
 * on axis 0 the packed grid has g rows, so g must split into the packing planes; and 3-bit
 * dequantization with axis 1 slices B·H // g rows, which cannot be reshaped back [inferred from code].
 */
export function checkHqqLimits(
  rules: BackendRules, settings: QuantizedCacheSettings, batchTimesHeads: number, layers: number[],
  bits: { readonly key: number; readonly value: number } = { key: settings.nbits, value: settings.nbits },
): Diagnostic[] {
  if (rules.backend !== 'hqq') return [];
  // One check per distinct (bits, axis) pair: transformers' path has a single nbits (kvscope's K/V bits apart may have two).
  const sides = [{ nbits: bits.key, axis: settings.axisKey }, { nbits: bits.value, axis: settings.axisValue }].filter((side) => rules.nbits.includes(side.nbits));
  const distinctBits = [...new Set(sides.map((side) => side.nbits))];
  return distinctBits.flatMap((nbits) => hqqLimits(settings.groupSize, nbits, sides.filter((side) => side.nbits === nbits).map((side) => side.axis), batchTimesHeads, layers));
}

function hqqLimits(groupSize: number, nbits: number, axes: number[], batchTimesHeads: number, layers: number[]): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  if (nbits === 3 && axes.includes(1) && isPositiveInteger(groupSize)) {
    diagnostics.push({
      code: 'hqq-3bit-axis-1',
      severity: 'error',
      origin: 'backend',
      message:
        `HQQ 3-bit dequantization slices W_r[: shape[0]*shape[1] // group_size], which is B·H // g = ${batchTimesHeads} // ${groupSize} = ` +
        `${Math.floor(batchTimesHeads / groupSize)} rows for a KV tensor [B, H, S, D] on axis 1, so the reshape after it fails at the first ` +
        'decode step (inferred from hqq\'s code).',
      layers,
      fix: 'Use axis 0 with 3 bits, or nbits 4.',
    });
  }
  const planes = hqqPackingFactor(nbits);
  if (axes.includes(0) && isPositiveInteger(groupSize) && groupSize % planes !== 0) {
    diagnostics.push({
      code: 'hqq-bitpack-group-size',
      severity: 'error',
      origin: 'backend',
      message:
        `HQQ on axis 0 packs the [g, N/g] grid along its g = ${groupSize} rows; ${nbits}-bit packing needs them to be a multiple of ` +
        `${planes}, otherwise the packing shapes mismatch and torch raises a RuntimeError.`,
      layers,
      fix: `Use a q_group_size that is a multiple of ${planes}, such as 64.`,
    });
  }
  return diagnostics;
}
