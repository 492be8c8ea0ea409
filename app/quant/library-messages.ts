import { pythonNumberRepr } from '../python-repr.js';

/**
 * The exact texts the backends raise, as Python formats them (spec §1.2 list, §3.1, §3.2): the
 * nbits and axis checks of transformers' quantized layer classes, and the libraries' own group-size
 * failures. The quantizers throw them and the preflight reports them, verbatim, so that users can
 * search for them (STYLE.md §10).
 */

/** `[\`2\`, \`4\`]` as in the layer constructors' messages. */
function backtickList(values: readonly number[]): string {
  return `[${values.map((value) => `\`${value}\``).join(', ')}]`;
}

/** `messageName` is `quanto` or `HQQ`, as the two layer classes spell it (backend-rules.ts). */
export function nbitsMessage(messageName: string, allowed: readonly number[], nbits: number): string {
  return `\`nbits\` for \`${messageName}\` backend has to be one of ${backtickList(allowed)} but got ${pythonNumberRepr(nbits)}`;
}

export function axisMessage(messageName: string, argument: 'axis_key' | 'axis_value', allowed: readonly number[], axis: number): string {
  return `\`${argument}\` for \`${messageName}\` backend has to be one of ${backtickList(allowed)} but got ${pythonNumberRepr(axis)}`;
}

/** optimum-quanto `group()` (spec §3.1 step 1), for both axes. */
export function quantoGroupSizeMessage(groupSize: number, axisNumel: number): string {
  return `Group size (${groupSize}) must be a divisor of (${axisNumel})`;
}

/** `torch.Size([1, 4, 37, 8])`, as torch prints a shape. */
export function torchSize(shape: readonly number[]): string {
  return `torch.Size([${shape.join(', ')}])`;
}

/** hqq `Quantizer.quantize`'s assertion (spec §3.2 "Checks"; "divisble" is hqq's spelling). */
export function hqqGroupSizeMessage(shape: readonly number[], groupSize: number): string {
  return `group_size should be divisble by the total tensor dimensions. shape: ${torchSize(shape)}, group_size: ${groupSize}`;
}
