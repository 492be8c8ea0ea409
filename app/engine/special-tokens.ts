import { GenerationError } from './engine-errors.js';

/** The token ids generation needs: where a sequence starts and every id that ends it. */
export interface SpecialTokens {
  readonly bosTokenId: number | null;
  /** generation stops on any of these */
  readonly eosTokenIds: readonly number[];
  /** where the ids came from, for messages */
  readonly source: 'generation_config.json' | 'config.json' | 'none';
}

/**
 * transformers' `GenerationConfig.from_model_config` semantics: generation_config.json wins, and
 * config.json (its text config, then the root) fills what it lacks. `eos_token_id` may be one id or a
 * list (stories260k: [1, 2], because llama2.c ends stories with BOS).
 */
export function readSpecialTokens(generationConfig: unknown, modelConfigs: readonly unknown[]): SpecialTokens {
  const sources = [generationConfig, ...modelConfigs].filter(isObject);
  let bos: number | null = null;
  let eos: number[] | null = null;
  let source: SpecialTokens['source'] = 'none';
  sources.forEach((config, index) => {
    if (bos === null && config['bos_token_id'] !== undefined && config['bos_token_id'] !== null) bos = tokenId(config['bos_token_id'], 'bos_token_id');
    if (eos === null && config['eos_token_id'] !== undefined && config['eos_token_id'] !== null) {
      eos = tokenIds(config['eos_token_id']);
      source = index === 0 && isObject(generationConfig) ? 'generation_config.json' : 'config.json';
    }
  });
  return { bosTokenId: bos, eosTokenIds: eos ?? [], source };
}

function tokenIds(value: unknown): number[] {
  if (Array.isArray(value)) return value.map((item) => tokenId(item, 'eos_token_id'));
  return [tokenId(value, 'eos_token_id')];
}

function tokenId(value: unknown, field: string): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  throw new GenerationError(`\`${field}\` should be a token id (a non-negative integer) or a list of them, got ${JSON.stringify(value)}.`,
    `Fix ${field} in generation_config.json or config.json.`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
