import { ConfigError } from '../errors.js';
import { storedName } from './attribute-map.js';
import { describeValue, isConfigObject, type ConfigObject } from './config-object.js';
import { pythonListRepr } from '../python-repr.js';
import { withExplanation } from './verbatim-message.js';

export interface TextConfigOptions {
  /** Python's `decoder=None` when undefined */
  readonly decoder?: boolean;
  /** Python's `encoder=None` when undefined */
  readonly encoder?: boolean;
}

/** The sub-config names `get_text_config` searches, in order (spec §2.1 step 2). */
const DECODER_NAMES = ['decoder', 'generator', 'text_config'] as const;
const ENCODER_NAMES = ['text_encoder'] as const;

/**
 * `PreTrainedConfig.get_text_config(decoder, encoder)` (V5, spec §2.1): a multimodal wrapper yields
 * its text sub-config, a plain decoder yields itself, and a legacy flat encoder-decoder config yields
 * a copy with its `decoder_*` (or `encoder_*`) keys renamed to the generic names.
 * `QuantizedCache` calls it with `decoder=True` (spec §1.2 step 2).
 */
export function getTextConfig(config: ConfigObject, options: TextConfigOptions = {}): ConfigObject {
  const decoder = options.decoder ?? null;
  const encoder = options.encoder ?? null;
  const returnBoth = decoder === encoder;
  const candidates = returnBoth ? [...ENCODER_NAMES, ...DECODER_NAMES] : decoder === true ? DECODER_NAMES : ENCODER_NAMES;
  const valid = candidates.filter((name) => config[name] !== undefined && config[name] !== null);

  if (valid.length > 1) throw multipleTextConfigsError(valid);
  if (valid.length === 1) return subConfig(config, valid[0] as string);
  if (!returnBoth && config['is_encoder_decoder'] === true) return renamedLegacyEncoderDecoder(config, decoder === true ? 'decoder' : 'encoder');
  return config;
}

function multipleTextConfigsError(valid: readonly string[]): ConfigError {
  const verbatim =
    `Multiple valid text configs were found in the model config: ${pythonListRepr(valid)}. In this case, ` +
    'using `get_text_config()` would be ambiguous. Please specify the desired text config directly, e.g. ' +
    '`text_config = config.sub_config_name`';
  return new ConfigError(withExplanation(verbatim,
    `kvscope: transformers' QuantizedCache calls get_text_config(decoder=True) and raises this. ` +
    `Keep only the decoder's sub-config among ${valid.join(', ')} in config.json (set the others to null), ` +
    'or point kvscope at a config.json that holds the text decoder directly.'));
}

function subConfig(config: ConfigObject, name: string): ConfigObject {
  const value = config[name];
  if (isConfigObject(value)) return value;
  throw new ConfigError(
    `The model config's \`${name}\` should be the text model's config (an object) but is ${describeValue(value)}. ` +
    `transformers reads the text config from it (get_text_config); fix or remove \`${name}\` in config.json.`,
  );
}

/**
 * Spec §2.1 step 6: every key starting with `keep` (note: also e.g. `decoder_start_token_id`) is
 * renamed: `{keep}_layers` → num_hidden_layers, `{keep}_attention_heads` → num_attention_heads,
 * otherwise the key minus `{keep}_`; the new name goes through the attribute map.
 */
function renamedLegacyEncoderDecoder(config: ConfigObject, keep: 'decoder' | 'encoder'): ConfigObject {
  const renamed: Record<string, unknown> = { ...config };
  for (const key of Object.keys(config)) {
    if (!key.startsWith(keep)) continue;
    let newName: string;
    if (key === `${keep}_layers`) newName = 'num_hidden_layers';
    else if (key === `${keep}_attention_heads`) newName = 'num_attention_heads';
    else newName = key.slice(keep.length + 1);
    newName = storedName(config, newName);
    const value = renamed[key];
    delete renamed[key];
    renamed[newName] = value;
  }
  return renamed;
}
