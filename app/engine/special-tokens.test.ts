import { describe, expect, it } from 'vitest';
import { readSpecialTokens } from './special-tokens.js';

describe('readSpecialTokens', () => {
  it('prefers generation_config.json and accepts a list of EOS ids (stories260k)', () => {
    expect(readSpecialTokens({ bos_token_id: 1, eos_token_id: [1, 2] }, [{ bos_token_id: 1, eos_token_id: 2 }]))
      .toEqual({ bosTokenId: 1, eosTokenIds: [1, 2], source: 'generation_config.json' });
  });

  it('falls back to config.json (text config first), field by field', () => {
    expect(readSpecialTokens(null, [{ eos_token_id: 7 }, { bos_token_id: 3, eos_token_id: 9 }]))
      .toEqual({ bosTokenId: 3, eosTokenIds: [7], source: 'config.json' });
    expect(readSpecialTokens({}, [{}])).toEqual({ bosTokenId: null, eosTokenIds: [], source: 'none' });
  });

  it('refuses ids that are not token ids', () => {
    expect(() => readSpecialTokens({ eos_token_id: ['</s>'] }, [])).toThrow(/`eos_token_id` should be a token id/);
  });
});
