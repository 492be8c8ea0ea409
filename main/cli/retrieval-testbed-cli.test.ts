import { describe, expect, it } from 'vitest';
import { cli, useCliSandbox } from './test-support/cli-sandbox.js';

const sandbox = useCliSandbox('retrieval-testbed');

interface RetrievalJson {
  model: unknown;
  map: { lengths: number[]; depths: number[]; accuracy: number[][]; counts: number[][] };
  referenceMap: { accuracy: number[][] };
  samples: { answers: string[]; prediction: string; score: number; referencePrediction: string; referenceScore: number }[];
}

async function passkey(args: readonly string[]): Promise<RetrievalJson> {
  const { code, out, err } = await cli(['eval', '--task', 'passkey', '--model', 'synthetic-retrieval', '--samples', '1', '--json', ...args]);
  expect(err, 'every cell says how it went').toMatch(/passkey length \d+, depth \d+ %/);
  expect(code, err).toBe(0);
  return JSON.parse(out) as RetrievalJson;
}

/** run_test.py's check, independently of kvscope's scorer: the first number of the answer is the pass key. */
const retrieved = (prediction: string, answer: string) => /\d+/.exec(prediction)?.[0] === answer;

describe('the retrieval testbed (synthetic-retrieval) under kvscope eval --task passkey', () => {
  it('retrieves the pass key at every depth and length up to its 4,096-token context with the dynamic cache', async () => {
    expect(sandbox.dir()).not.toBe('');
    const json = await passkey(['--cache', 'dynamic', '--lengths', '256,1024,4096', '--depths', '0,50,100']);
    expect(json.map.counts).toEqual([[1, 1, 1], [1, 1, 1], [1, 1, 1]]);
    expect(json.map.accuracy).toEqual([[1, 1, 1], [1, 1, 1], [1, 1, 1]]);
    for (const sample of json.samples) expect(retrieved(sample.prediction, sample.answers[0]!), sample.prediction).toBe(true);
  }, 600_000);

  it('shows where a quantized cache breaks retrieval: quanto 2-bit loses every pass key, 4-bit keeps them, the same map each run', async () => {
    const args = ['--cache', 'quantized', '--backend', 'quanto', '--lengths', '256,1024', '--depths', '0,100'];
    const twoBit = await passkey([...args, '--nbits', '2']);
    // the full-precision reference beside it is exact, the 2-bit cache's map is not
    expect(twoBit.referenceMap.accuracy).toEqual([[1, 1], [1, 1]]);
    expect(twoBit.map.accuracy).not.toEqual(twoBit.referenceMap.accuracy);
    for (const sample of twoBit.samples) {
      expect(sample.score).toBe(retrieved(sample.prediction, sample.answers[0]!) ? 1 : 0);
      expect(retrieved(sample.referencePrediction, sample.answers[0]!)).toBe(true);
    }
    expect(twoBit.map.accuracy).toEqual([[0, 0], [0, 0]]);
    // deterministic: the same predictions again
    const again = await passkey([...args, '--nbits', '2']);
    expect(again.samples.map((sample) => sample.prediction)).toEqual(twoBit.samples.map((sample) => sample.prediction));
    const fourBit = await passkey([...args, '--nbits', '4']);
    expect(fourBit.map.accuracy).toEqual([[1, 1], [1, 1]]);
  }, 600_000);
});
