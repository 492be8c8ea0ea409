import { createHash } from 'node:crypto';
import { Tokenizer } from '@huggingface/tokenizers';
import { describe, expect, it } from 'vitest';
import { generatePasskey } from '../lab/retrieval/passkey.js';
import { buildSyntheticModel } from './synthetic-model.js';
import { retrievalTestbedSpec, TESTBED_CONTEXT } from './retrieval-testbed-spec.js';
import { retrievalTestbedTokenizer, testbedVocabulary } from './retrieval-testbed-tokenizer.js';
import {
  MATCH_LOGIT, MATCH_TOKENS, POSITION_PAIRS, POSITION_WEIGHT, retrievalTestbedWeights, ropeFrequency, testbedLayout, tokenAxis, tokenSign,
} from './retrieval-testbed-weights.js';

const spec = retrievalTestbedSpec();
const tokenizerParts = retrievalTestbedTokenizer(spec.maxPositionEmbeddings);
const tokenizer = new Tokenizer(tokenizerParts.tokenizerJson, tokenizerParts.tokenizerConfig);

describe('the retrieval testbed', () => {
  it('tokenizes a passkey prompt into known words and one token per digit, and decodes the number back', () => {
    const sample = generatePasskey({ seed: 7, targetTokens: 600, depthPercent: 40, countTokens: (text) => tokenizer.encode(text).ids.length });
    const encoding = tokenizer.encode(sample.prompt);
    const unknown = encoding.tokens.filter((token: string) => token === '<unk>').length;
    // only the filler's cut words (at most one at each cut) are unknown
    expect(unknown).toBeLessThanOrEqual(2);
    const key = sample.answers[0]!;
    const at = encoding.tokens.indexOf(key[0]!);
    expect(encoding.tokens.slice(at, at + key.length)).toEqual([key[0], ...[...key.slice(1)].map((digit) => `##${digit}`)]);
    expect(tokenizer.decode(encoding.ids.slice(at, at + key.length + 1), { skip_special_tokens: true })).toBe(`${key}.`);
    expect(spec.vocabSize).toBe(testbedVocabulary().length);
  });

  it('gives tokens codes that are equal, opposite or orthogonal', () => {
    const weights = retrievalTestbedWeights(spec, tokenizerParts.mutedTokenIds);
    const embed = weights.embedTokens as Float32Array;
    const layout = testbedLayout(spec.vocabSize, spec.headDim);
    const code = (token: number) => embed.subarray(token * spec.hiddenSize + layout.slot(0), token * spec.hiddenSize + layout.slot(1));
    for (let a = 0; a < spec.vocabSize; a++) {
      for (let b = 0; b < spec.vocabSize; b++) {
        const dot = code(a).reduce((sum, value, i) => sum + value * code(b)[i]!, 0);
        expect(dot).toBe(a === b ? 1 : tokenAxis(a) === tokenAxis(b) ? -1 : 0);
      }
    }
    expect(tokenSign(0)).toBe(1);
  });

  it('has previous-token heads whose peak beats every other distance up to its context by at least 18', () => {
    // the score of distance Δ for head δ: POSITION_WEIGHT·Σ_j cos((Δ − δ)·θ_j), as the weights' comment derives
    const score = (offset: number) => {
      let sum = 0;
      for (let pair = 0; pair < POSITION_PAIRS; pair++) sum += POSITION_WEIGHT * Math.cos(offset * ropeFrequency(spec, pair));
      return sum;
    };
    let best = -Infinity;
    for (let offset = 1; offset <= TESTBED_CONTEXT; offset++) best = Math.max(best, score(offset));
    expect(score(0) - best).toBeGreaterThan(18);
  });

  it('turns the copy head\'s pairs by at most 0.25 rad over its context, so a full match beats two of three by 20', () => {
    const layout = testbedLayout(spec.vocabSize, spec.headDim);
    let slowest = Infinity;
    let fastest = 0;
    for (let g = 0; g < MATCH_TOKENS; g++) {
      for (let axis = 0; axis < layout.axes; axis++) {
        const frequency = ropeFrequency(spec, layout.matchPair(g, axis));
        fastest = Math.max(fastest, frequency);
        slowest = Math.min(slowest, frequency);
      }
    }
    expect(fastest * TESTBED_CONTEXT).toBeLessThan(0.25);
    expect(slowest).toBeGreaterThan(0);
    expect(MATCH_TOKENS * MATCH_LOGIT * Math.cos(fastest * TESTBED_CONTEXT) - (MATCH_TOKENS - 1) * MATCH_LOGIT).toBeGreaterThan(20);
  });

  it('builds a Llama folder in a moment, byte for byte the same each time', () => {
    const start = performance.now();
    const first = buildSyntheticModel('synthetic-retrieval');
    expect(performance.now() - start).toBeLessThan(3000);
    const digest = (folder: typeof first) => folder.files.map((file) => createHash('sha256').update(file.content as string | Uint8Array).digest('hex'));
    expect(digest(buildSyntheticModel('synthetic-retrieval'))).toEqual(digest(first));
    const config = JSON.parse(first.files.find((file) => file.path === 'config.json')!.content as string) as Record<string, unknown>;
    expect(config).toMatchObject({ model_type: 'llama', num_hidden_layers: 2, num_key_value_heads: 3, head_dim: 256, max_position_embeddings: 4096, rope_theta: 1e20 });
  });
});
