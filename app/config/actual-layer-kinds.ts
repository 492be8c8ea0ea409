import { optionalInteger, optionalIntegerList } from './config-fields.js';
import type { ConfigObject } from './config-object.js';
import { normalizedKind } from './layer-kinds.js';

export interface ActualLayerKinds {
  readonly kinds: readonly string[];
  /** set when transformers' derived list misdescribes the layers */
  readonly note: string | null;
}

/**
 * What each layer really is, where that differs from transformers' derived `layer_types`.
 * Jamba and Bamba keep their structure in `layers_block_type`, which `get_layer_types_and_kwargs`
 * never reads: their configs expose no `layer_types`, so the fallback ladder calls every layer
 * full attention (spec §2.4, §2.5). NemotronH and Zamba call their mamba layers "linear_attention".
 */
export function actualLayerKinds(config: ConfigObject, modelType: string | undefined, derived: readonly string[], where: string): ActualLayerKinds {
  if (modelType === 'jamba') {
    const period = optionalInteger(config, 'attn_layer_period', where) ?? 8;
    const offset = optionalInteger(config, 'attn_layer_offset', where) ?? 4;
    const kinds = derived.map((_, i) => (i % period === offset ? 'full_attention' : 'mamba'));
    return { kinds, note: missedStructureNote('jamba', `i % attn_layer_period (${period}) == attn_layer_offset (${offset})`, kinds) };
  }
  if (modelType === 'bamba') {
    const indices = new Set(optionalIntegerList(config, 'attn_layer_indices', where) ?? []);
    const kinds = derived.map((_, i) => (indices.has(i) ? 'full_attention' : 'mamba'));
    return { kinds, note: missedStructureNote('bamba', 'i in attn_layer_indices', kinds) };
  }
  if (modelType === 'nemotron_h' || modelType === 'zamba') {
    return { kinds: derived.map((type) => (type === 'linear_attention' ? 'mamba' : normalizedKind(type))), note: null };
  }
  return { kinds: derived.map(normalizedKind), note: null };
}

function missedStructureNote(modelType: string, rule: string, kinds: readonly string[]): string {
  const attention = kinds.flatMap((kind, i) => (kind === 'full_attention' ? [i] : []));
  return (
    `${modelType} keeps its structure in layers_block_type ("attention" where ${rule}, "mamba" elsewhere): ` +
    `attention at ${attention.length > 0 ? attention.join(', ') : 'no layer'}. transformers' get_layer_types_and_kwargs ` +
    'does not read it and falls back to full_attention for every layer.'
  );
}
