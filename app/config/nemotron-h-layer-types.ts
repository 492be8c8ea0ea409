import { ConfigError } from '../errors.js';
import { getAttribute } from './attribute-map.js';
import { optionalStringList } from './config-fields.js';
import type { ConfigObject } from './config-object.js';
import { remapLegacyLayerTypes } from './layer-kinds.js';

/** `hybrid_override_pattern` characters (spec §2.4, nemotron_h row). */
const PATTERN_TYPES: Readonly<Record<string, string>> = { M: 'linear_attention', E: 'moe', '*': 'full_attention', '-': 'mlp' };

const DEFAULT_TYPES = ['linear_attention', 'moe', 'full_attention', 'mlp'];

export interface NemotronHLayerTypes {
  readonly types: readonly string[];
  readonly fromConfig: boolean;
  readonly rule: string;
}

/**
 * NemotronH (spec §2.4): `layer_types` is `layers_block_type` through the attribute map; a given
 * list is legacy-remapped, else the legacy `hybrid_override_pattern` string is expanded, else the
 * class default. transformers then sets `num_hidden_layers = len(layers_block_type)`.
 */
export function nemotronHLayerTypes(config: ConfigObject, where: string): NemotronHLayerTypes {
  const given = optionalStringList(config, 'layer_types', where);
  if (given !== null) {
    return { types: remapLegacyLayerTypes(given), fromConfig: true, rule: 'nemotron_h: layers_block_type from config.json, legacy names remapped' };
  }
  const pattern = getAttribute(config, 'hybrid_override_pattern');
  if (pattern === undefined || pattern === null) {
    return { types: DEFAULT_TYPES, fromConfig: false, rule: 'nemotron_h: class default layers_block_type' };
  }
  if (typeof pattern !== 'string') {
    throw new ConfigError(`${where}: \`hybrid_override_pattern\` should be a string of M, E, * and - but is ${JSON.stringify(pattern)}. Fix it in config.json.`);
  }
  const types = [...pattern].map((char, index) => {
    const type = PATTERN_TYPES[char];
    if (type !== undefined) return type;
    throw new ConfigError(
      `${where}: \`hybrid_override_pattern\` has "${char}" at position ${index}; only M (mamba), E (MoE), * (attention) ` +
      'and - (MLP) are defined. Fix the pattern or give `layers_block_type` explicitly.',
    );
  });
  return { types, fromConfig: false, rule: `nemotron_h: hybrid_override_pattern "${pattern}" (M linear_attention, E moe, * full_attention, - mlp)` };
}
