import { ConfigError } from '../errors.js';
import { getAttribute } from './attribute-map.js';
import { optionalInteger, optionalIntegerList } from './config-fields.js';
import type { ConfigObject } from './config-object.js';

/** What a family's `__post_init__`/`__init__` puts in `layer_types` when config.json has none (spec §2.4). */
export interface FamilyLayerTypes {
  readonly types: readonly string[];
  /** the rule, for reports (users read it: no document citations), e.g. `gemma3_text: full where (i+1) % 6 == 0` */
  readonly rule: string;
  readonly notes: readonly string[];
}

export interface FamilyRuleInput {
  readonly config: ConfigObject;
  readonly numLayers: number;
  /** `config.sliding_window` after the family's own adjustments (e.g. Qwen2 without use_sliding_window → null) */
  readonly slidingWindow: number | null;
  readonly where: string;
}

type FamilyRule = (input: FamilyRuleInput) => FamilyLayerTypes;

const SLIDING = 'sliding_attention';
const FULL = 'full_attention';

function perLayer(numLayers: number, typeOf: (i: number) => string): string[] {
  return Array.from({ length: numLayers }, (_, i) => typeOf(i));
}

function range(count: number): number[] {
  return Array.from({ length: count }, (_, i) => i);
}

function derived(types: readonly string[], rule: string, notes: readonly string[] = []): FamilyLayerTypes {
  return { types, rule, notes };
}

/** `"sliding_attention" if (i+1) % pattern else "full_attention"` (gemma3_text, cohere2). */
function slidingEveryPattern(modelType: string, fallbackPattern: number): FamilyRule {
  return ({ config, numLayers, where }) => {
    const pattern = optionalInteger(config, 'sliding_window_pattern', where) ?? fallbackPattern;
    if (pattern === 0) throw zeroPattern(where, modelType);
    return derived(perLayer(numLayers, (i) => ((i + 1) % pattern !== 0 ? SLIDING : FULL)),
      `${modelType}: full attention where (i+1) % ${pattern} == 0, sliding elsewhere (sliding_window_pattern ${pattern})`);
  };
}

function zeroPattern(where: string, modelType: string): ConfigError {
  return new ConfigError(
    `${where}: ${modelType} derives layer_types with \`(i+1) % sliding_window_pattern\`, and the pattern is 0, so ` +
    "transformers' config raises ZeroDivisionError. Add an explicit `layer_types` list to config.json.",
  );
}

const gemma2: FamilyRule = ({ numLayers }) =>
  derived(perLayer(numLayers, (i) => ((i + 1) % 2 !== 0 ? SLIDING : FULL)), 'gemma2: sliding at even i, full at odd i');

const gemma3n: FamilyRule = ({ numLayers }) =>
  derived(perLayer(numLayers, (i) => ((i + 1) % 5 === 0 ? FULL : SLIDING)), 'gemma3n_text: full attention where (i+1) % 5 == 0');

const qwen2: FamilyRule = ({ config, numLayers, slidingWindow, where }) => {
  const maxWindowLayers = optionalInteger(config, 'max_window_layers', where) ?? 28;
  return derived(
    perLayer(numLayers, (i) => (slidingWindow !== null && i >= maxWindowLayers ? SLIDING : FULL)),
    slidingWindow === null
      ? 'qwen2/qwen3: use_sliding_window is false, so sliding_window becomes None and every layer is full attention'
      : `qwen2/qwen3: sliding attention for i >= max_window_layers (${maxWindowLayers}), full below`,
  );
};

const gptOss: FamilyRule = ({ numLayers }) =>
  derived(perLayer(numLayers, (i) => ((i + 1) % 2 !== 0 ? SLIDING : FULL)), 'gpt_oss: sliding at even i, full at odd i');

const llama4: FamilyRule = ({ config, numLayers, where }) => {
  const given = optionalIntegerList(config, 'no_rope_layers', where);
  const interval = optionalInteger(config, 'no_rope_layer_interval', where) ?? 4;
  // `no_rope_layers = no_rope_layers or [...]`: an empty list is falsy, as in the published Llama-4 configs.
  const noRopeLayers = given !== null && given.length > 0 ? given : range(numLayers).map((i) => ((i + 1) % interval !== 0 ? 1 : 0));
  return derived(noRopeLayers.map((flag) => (flag !== 0 ? 'chunked_attention' : FULL)),
    given !== null && given.length > 0
      ? 'llama4_text: chunked where no_rope_layers[i] is 1, full (NoPE) where 0'
      : `llama4_text: full (NoPE) where (i+1) % ${interval} == 0, chunked elsewhere`);
};

const olmo3: FamilyRule = ({ numLayers }) =>
  derived(perLayer(numLayers, (i) => ((i + 1) % 4 !== 0 ? SLIDING : FULL)), 'olmo3: full attention where (i+1) % 4 == 0');

/**
 * Exaone4Config: the pattern becomes 0 when sliding_window is None, then `(i+1) % pattern`.
 * Published configs write the pattern as a string such as "LLLG" (L local, G global) and ship
 * `layer_types`; transformers' numeric rule cannot take a string, so kvscope reads it per character.
 */
const exaone4: FamilyRule = ({ config, numLayers, slidingWindow, where }) => {
  const raw = getAttribute(config, 'sliding_window_pattern');
  if (typeof raw === 'string' && slidingWindow !== null) {
    if (!/^[LG]+$/.test(raw)) {
      throw new ConfigError(`${where}: exaone4 \`sliding_window_pattern\` "${raw}" should use only L (local) and G (global). Add an explicit \`layer_types\` list to config.json.`);
    }
    return derived(perLayer(numLayers, (i) => (raw[i % raw.length] === 'G' ? FULL : SLIDING)),
      `exaone4: sliding_window_pattern "${raw}" read per layer (L sliding, G full)`,
      [`exaone4's sliding_window_pattern is the string "${raw}"; transformers' Exaone4Config computes (i+1) % pattern, which a string cannot take, so kvscope reads it per character. Real configs ship layer_types.`]);
  }
  const pattern = slidingWindow === null ? 0 : optionalInteger(config, 'sliding_window_pattern', where) ?? 4;
  if (pattern === 0) throw zeroPattern(where, 'exaone4 (sliding_window null makes the pattern 0)');
  return derived(perLayer(numLayers, (i) => ((i + 1) % pattern !== 0 ? SLIDING : FULL)),
    `exaone4: full attention where (i+1) % ${pattern} == 0, sliding elsewhere`);
};

const qwen3Next: FamilyRule = ({ config, numLayers, where }) => {
  const interval = optionalInteger(config, 'full_attention_interval', where) ?? 4;
  return derived(perLayer(numLayers, (i) => ((i + 1) % interval !== 0 ? 'linear_attention' : FULL)),
    `qwen3_next: full attention where (i+1) % ${interval} == 0, linear attention elsewhere`);
};

const minimax: FamilyRule = ({ numLayers }) =>
  derived(perLayer(numLayers, (i) => ((i + 1) % 2 !== 0 ? FULL : 'linear_attention')), 'minimax: full attention at even i, linear at odd i');

const lfm2: FamilyRule = ({ config, numLayers, where }) => {
  const given = optionalIntegerList(config, 'full_attn_idxs', where);
  const fullIndices = new Set(given !== null && given.length > 0 ? given : range(numLayers));
  return derived(perLayer(numLayers, (i) => (fullIndices.has(i) ? FULL : 'conv')),
    given !== null && given.length > 0
      ? `lfm2: full attention at full_attn_idxs [${given.join(', ')}], conv elsewhere`
      : 'lfm2: no full_attn_idxs, so every layer is full attention');
};

const falconH1: FamilyRule = ({ numLayers }) =>
  derived(perLayer(numLayers, () => 'hybrid'), 'falcon_h1: layers_block_type = ["hybrid"] * N, read through attribute_map');

const zamba: FamilyRule = ({ config, numLayers, where }) => {
  const period = optionalInteger(config, 'attn_layer_period', where) ?? 6;
  const offset = optionalInteger(config, 'attn_layer_offset', where) ?? 4;
  const tail = perLayer(Math.max(0, numLayers - 3), (i) => (i % period === offset ? 'hybrid' : 'linear_attention'));
  return derived(['linear_attention', 'linear_attention', 'hybrid', ...tail],
    `zamba: two mamba layers, a hybrid at 2, then hybrid where (i-3) % ${period} == ${offset}`);
};

const graniteMoeHybrid: FamilyRule = ({ numLayers }) =>
  derived(perLayer(numLayers, () => 'mamba'), 'granitemoehybrid: no layer_types, so layers_block_type = ["mamba"] * N');

const FAMILY_RULES: Readonly<Record<string, FamilyRule>> = {
  gemma2,
  gemma3_text: slidingEveryPattern('gemma3_text', 6),
  gemma3n_text: gemma3n,
  cohere2: slidingEveryPattern('cohere2', 4),
  qwen2,
  qwen3: qwen2,
  gpt_oss: gptOss,
  llama4_text: llama4,
  olmo3,
  exaone4,
  qwen3_next: qwen3Next,
  minimax,
  lfm2,
  falcon_h1: falconH1,
  zamba,
  granitemoehybrid: graniteMoeHybrid,
};

/** The family's own derivation, or null for families that leave it to the fallback ladder (spec §2.2). */
export function familyLayerTypes(modelType: string | undefined, input: FamilyRuleInput): FamilyLayerTypes | null {
  const rule = modelType !== undefined ? FAMILY_RULES[modelType] : undefined;
  return rule !== undefined ? rule(input) : null;
}

/** Families that pass a user-given list through `remap_legacy_layer_types` (spec §2.3). */
export function remapsLegacyLayerTypes(modelType: string | undefined): boolean {
  return modelType === 'qwen3_next' || modelType === 'nemotron_h';
}
