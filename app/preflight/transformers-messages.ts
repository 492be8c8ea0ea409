import { pythonNumberRepr, pythonSetRepr } from '../config/python-repr.js';

/**
 * The exact texts transformers and its backends raise (spec §1.2 list, §3.1, §3.2), as Python
 * formats them. Kept verbatim so that users can search for them (STYLE.md §10).
 */

export function unknownBackendMessage(backend: string): string {
  return `Unknown quantization backend \`${backend}\``;
}

/** `{'sliding_attention'}`: Python's set repr, sorted (Python's own order depends on PYTHONHASHSEED). */
export function layerTypesAsPythonSet(types: Iterable<string>): string {
  return pythonSetRepr(types);
}

export function onlyFullAttentionMessage(invalidTypes: Iterable<string>): string {
  return (
    '`QuantizedCache` is only supported for models with only full attention layers. We found the following ' +
    `invalid layer types: ${layerTypesAsPythonSet(invalidTypes)}`
  );
}

/** `[\`2\`, \`4\`]` as in the layer constructors' messages. */
function backtickList(values: readonly number[]): string {
  return `[${values.map((value) => `\`${value}\``).join(', ')}]`;
}

/** `messageName` is `quanto` or `HQQ`, as the two layer classes spell it. */
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

/** hqq `Quantizer.quantize`'s assertion (spec §3.2 "Checks"; "divisble" is hqq's spelling). */
export function hqqGroupSizeMessage(shape: readonly number[], groupSize: number): string {
  return `group_size should be divisble by the total tensor dimensions. shape: torch.Size([${shape.join(', ')}]), group_size: ${groupSize}`;
}
