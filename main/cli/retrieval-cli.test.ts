import { describe, expect, it } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { copyOfStories, storiesDir } from '../../app/node/test-support/stories.js';
import { cli, useCliSandbox } from './test-support/cli-sandbox.js';

const sandbox = useCliSandbox('retrieval');

interface RetrievalJson {
  ok: boolean;
  cache: string;
  map: { lengths: number[]; depths: number[]; accuracy: number[][]; counts: number[][] };
  referenceMap: { counts: number[][] };
  samples: { length: number; depth: number; answers: string[]; prediction: string; score: number; referencePrediction: string; referenceScore: number; kvBytes: number; referenceKvBytes: number; promptTokens: number }[];
}

describe('kvscope eval --task on stories260k', () => {
  it('prefills each generated prompt, decodes greedily with the chosen cache and scores it', async () => {
    const { code, out, err } = await cli(['eval', '--task', 'passkey', '--model', storiesDir(), '--lengths', '256,512', '--depths', '0,50,100',
      '--samples', '1', '--cache', 'quantized', '--backend', 'quanto', '--nbits', '4', '--group-size', '32', '--json', '--out', join(sandbox.dir(), 'passkey.json')]);
    expect(err).toContain('passkey length 512, depth 100 %');
    expect(code).toBe(0);
    const json = JSON.parse(out) as RetrievalJson;
    expect(json.ok).toBe(true);
    // the record holds what --json printed, each prompt named by its sha256
    const record = JSON.parse(readFileSync(join(sandbox.dir(), 'passkey.json'), 'utf8')) as RetrievalJson & { kind: string; samples: { promptSha256: string }[] };
    expect(record.kind).toBe('kvscope-retrieval');
    expect(record.samples).toEqual(json.samples);
    for (const sample of record.samples) expect(sample.promptSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(json.cache).toBe('quantized');
    expect(json.map.lengths).toEqual([256, 512]);
    expect(json.map.depths).toEqual([0, 50, 100]);
    expect(json.map.counts).toEqual([[1, 1], [1, 1], [1, 1]]);
    // the full-precision dynamic cache on the same prompts beside it
    expect(json.referenceMap.counts).toEqual([[1, 1], [1, 1], [1, 1]]);
    for (const sample of json.samples) {
      // the prompt fits the model's 512 positions beside the passkey test's 10 new tokens
      expect(sample.promptTokens).toBeLessThanOrEqual(sample.length - 10);
      // scored as run_test.py: the first number of the decoded text against the pass key
      for (const [prediction, score] of [[sample.prediction, sample.score], [sample.referencePrediction, sample.referenceScore]] as const) {
        const first = /\d+/.exec(prediction.trim());
        expect(score).toBe(first !== null && Number(first[0]) === Number(sample.answers[0]) ? 1 : 0);
      }
    }
    // the KV memory per length: 4-bit codes hold less than the dynamic cache's fp32, and both grow with the prompt
    const at = (length: number) => json.samples.find((sample) => sample.length === length && sample.depth === 50)!;
    expect(at(512).kvBytes).toBeLessThan(at(512).referenceKvBytes);
    expect(at(512).referenceKvBytes).toBeGreaterThan(at(256).referenceKvBytes);
    // one sample per cell: the map holds that sample's score
    json.map.depths.forEach((depth, r) => json.map.lengths.forEach((length, c) => {
      expect(json.map.accuracy[r]![c]).toBe(json.samples.find((sample) => sample.depth === depth && sample.length === length)!.score);
    }));
  }, 120_000);

  it('refuses retrieval options without --task, and text options with it', async () => {
    const without = await cli(['eval', '--model', storiesDir(), '--lengths', '512']);
    expect(without.code).toBe(1);
    expect(without.err).toContain('--lengths belongs to a retrieval evaluation; add --task');
    const withText = await cli(['eval', '--task', 'passkey', '--model', storiesDir(), '--lengths', '512', '--context', '64']);
    expect(withText.code).toBe(1);
    expect(withText.err).toContain('--context is an option of the text evaluation');
 
  });

  it('refuses --chat on a model without a chat template before any run', async () => {
    const outcome = await cli(['eval', '--task', 'passkey', '--model', storiesDir(), '--lengths', '256', '--cache', 'dynamic', '--chat']);
    expect(outcome.code).toBe(1);
    expect(outcome.err).toContain('this model has no chat template');
    expect(outcome.err).toContain('kvscope eval --task --chat fits each prompt as the chat template renders it');
    expect(outcome.err).not.toContain('passkey length 256');
  });

  it('says that the prompts are fitted with the model\'s tokenizer when the folder has none', async () => {
    const copy = copyOfStories();
    try {
      rmSync(join(copy.dir, 'tokenizer.json'));
      const outcome = await cli(['eval', '--task', 'passkey', '--model', copy.dir, '--lengths', '256', '--cache', 'dynamic']);
      expect(outcome.code).toBe(1);
      expect(outcome.err).toContain('no tokenizer.json');
      expect(outcome.err).toContain('kvscope eval --task fits each prompt with the model\'s tokenizer');
    } finally {
      copy.remove();
    }
  });
});
