import { pythonSetRepr } from '../python-repr.js';

/**
 * The exact texts `QuantizedCache` raises (spec §1.2 list), as Python formats them. Kept verbatim so
 * that users can search for them (STYLE.md §10). The backends' own texts: app/quant/library-messages.ts.
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
