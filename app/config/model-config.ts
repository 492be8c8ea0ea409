import { ConfigError } from '../errors.js';
import { describeValue, isConfigObject, modelTypeOf, type ConfigObject } from './config-object.js';
import { textModelTypeForWrapper, withFamilyDefaults } from './family-defaults.js';
import { readKvGeometry, type ModelKvGeometry } from './kv-geometry.js';
import { deriveLayerTypes, type LayerTypeDerivation } from './layer-types.js';
import { getTextConfig } from './text-config.js';

/** A model's config.json, read the way transformers' `QuantizedCache` reads it (spec §1.2 steps 2–3). */
export interface ModelConfig {
  /** file name or path for messages, e.g. `stories260k/config.json` */
  readonly sourceName: string;
  /** config.json as parsed */
  readonly root: ConfigObject;
  /** the name of the sub-config that `get_text_config(decoder=True)` chose, or null for the config itself */
  readonly textConfigName: string | null;
  /** `get_text_config(decoder=True)` with the family's missing class defaults filled in */
  readonly text: ConfigObject;
  /** the text config's model_type */
  readonly modelType: string | undefined;
  /** attributes taken from the class defaults because config.json omits them */
  readonly defaultedFields: readonly string[];
  readonly layers: LayerTypeDerivation;
  readonly geometry: ModelKvGeometry;
  /** derivation notes worth showing (class defaults used, transformers' blind spots) */
  readonly notes: readonly string[];
}

const SUB_CONFIG_NAMES = ['decoder', 'generator', 'text_config', 'text_encoder'];

/** Builds a ModelConfig from an already-parsed config.json value. Throws ConfigError. */
export function modelConfigFromObject(value: unknown, sourceName: string): ModelConfig {
  if (!isConfigObject(value)) {
    throw new ConfigError(
      `${sourceName} should hold a JSON object (a model config) but holds ${describeValue(value)}. ` +
      "Point kvscope at the model's config.json.",
    );
  }
  const selected = getTextConfig(value, { decoder: true });
  const textConfigName = SUB_CONFIG_NAMES.find((name) => value[name] === selected) ?? null;
  const where = textConfigName === null ? sourceName : `${sourceName} (${textConfigName})`;
  const typed = withWrapperModelType(selected, value);
  const { config: text, defaulted } = withFamilyDefaults(typed);
  const modelType = modelTypeOf(text);
  const layers = deriveLayerTypes(text, where);
  const geometry = readKvGeometry(text, layers, where);
  const defaultsNote = defaulted.length > 0
    ? [`${where} omits ${defaulted.join(', ')}; kvscope uses transformers' ${modelType ?? ''} class defaults (${defaulted.map((key) => `${key}=${JSON.stringify(text[key])}`).join(', ')}).`]
    : [];
  return { sourceName, root: value, textConfigName, text, modelType, defaultedFields: defaulted, layers, geometry, notes: [...defaultsNote, ...layers.notes] };
}

/** A wrapper's text_config without model_type is built as the wrapper's text class (gemma3 → gemma3_text). */
function withWrapperModelType(text: ConfigObject, root: ConfigObject): ConfigObject {
  if (text === root || modelTypeOf(text) !== undefined) return text;
  const inferred = textModelTypeForWrapper(modelTypeOf(root));
  return inferred !== undefined ? { ...text, model_type: inferred } : text;
}
