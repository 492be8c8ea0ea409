import { describe, expect, it } from 'vitest';
import { countWords } from './test-support.js';
import { retrievalTask } from './registry.js';
import { RETRIEVAL_TASK_NAMES } from './retrieval-task.js';
import { passkeyMatch, postprocessPrediction, scorePrediction, stringMatchAll, stringMatchPart } from './score.js';

/** An independent check written apart from score.ts: count, by scanning with indexOf on upper-cased text. */
function handMatchCount(prediction: string, references: readonly string[]): number {
  let found = 0;
  for (const reference of references) {
    if (prediction.toUpperCase().indexOf(reference.toUpperCase()) !== -1) found += 1;
  }
  return found;
}

const fixed: readonly { prediction: string; references: string[]; all: number; part: number }[] = [
  { prediction: ' The special magic numbers are 1234567, 7654321 and 1111111.', references: ['1234567', '7654321', '1111111', '2222222'], all: 0.75, part: 1 },
  { prediction: 'ABCDE, fghij', references: ['abcde', 'FGHIJ', 'KLMNO'], all: 2 / 3, part: 1 },
  { prediction: 'nothing here', references: ['1234567'], all: 0, part: 0 },
  { prediction: '1. apple 2. Banana 3. cherry', references: ['apple', 'banana', 'cherry', 'date', 'elder'], all: 0.6, part: 1 },
  { prediction: '', references: ['x'], all: 0, part: 0 },
];

describe('RULER scoring', () => {
  it.each(fixed)('string_match_all / string_match_part on "$prediction"', ({ prediction, references, all, part }) => {
    expect(stringMatchAll(prediction, references)).toBeCloseTo(all, 12);
    expect(stringMatchAll(prediction, references)).toBe(handMatchCount(prediction, references) / references.length);
    expect(stringMatchPart(prediction, references)).toBe(part);
    expect(stringMatchPart(prediction, references)).toBe(handMatchCount(prediction, references) > 0 ? 1 : 0);
  });

  it('postprocess_pred strips and turns control characters into newlines', () => {
    expect(postprocessPrediction('  12345\t678\u0000x \n')).toBe('12345\n678\nx');
  });

  it('the passkey check takes the first number in the response, as run_test.py', () => {
    expect(passkeyMatch(' 4821. Remember it.', '4821')).toBe(1);
    expect(passkeyMatch(' 48210', '4821')).toBe(0);
    expect(passkeyMatch(' 12 and 4821', '4821')).toBe(0);
    expect(passkeyMatch(' no number', '4821')).toBe(0);
    expect(passkeyMatch('04821', '4821')).toBe(1); // int('04821') == 4821
    expect(() => scorePrediction('passkey', '1', ['1', '2'])).toThrow(/one pass key/);
  });

  it.each(RETRIEVAL_TASK_NAMES)('%s: the generated answers score 1 when all are predicted, their share when some are', (name) => {
    const task = retrievalTask(name);
    const sample = task.generate({ seed: 9, targetTokens: 900, depthPercent: 60, countTokens: countWords });
    expect(scorePrediction(task.metric, ` ${sample.answers.join(', ')}.`, sample.answers)).toBe(1);
    expect(scorePrediction(task.metric, ' I do not know.', sample.answers)).toBe(0);
    const some = sample.answers.slice(0, Math.max(1, sample.answers.length - 1));
    const expected = task.metric === 'passkey' ? 1 : handMatchCount(some.join(' '), sample.answers) / sample.answers.length;
    expect(scorePrediction(task.metric, some.join(' '), sample.answers)).toBe(expected);
  });
});
