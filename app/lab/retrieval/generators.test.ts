import { describe, expect, it } from 'vitest';
import { FILLER, FILLER_SENTENCE_CHARS } from './filler.js';
import { RETRIEVAL_TASK_NAMES, RetrievalTaskError } from './retrieval-task.js';
import { retrievalTask } from './registry.js';
import { countWords, occurrences } from './test-support.js';

const request = (seed: number, targetTokens = 600, depthPercent = 50) => ({ seed, targetTokens, depthPercent, countTokens: countWords });

describe('retrieval generators', () => {
  it.each(RETRIEVAL_TASK_NAMES)('%s: the same seed gives the same sample, another seed another', (name) => {
    const task = retrievalTask(name);
    const first = task.generate(request(7));
    expect(task.generate(request(7))).toEqual(first);
    expect(task.generate(request(8)).prompt).not.toBe(first.prompt);
    expect(first.task).toBe(name);
    expect(first.answers.length).toBeGreaterThan(0);
  });

  // The most one unit of filler adds under the word counter: a filler sentence (passkey cuts by
  // characters), a haystack line plus its separator, a rare word's repeats ("N. word" ×3), a word.
  const unitWords: Record<string, number> = {
    passkey: 5, 'niah-single': countWords(FILLER) + 1, 'niah-multikey': countWords(FILLER) + 1,
    'niah-multivalue': countWords(FILLER) + 1, 'variable-tracking': countWords(FILLER) + 1, cwe: 6, fwe: 5,
  };
  it.each(RETRIEVAL_TASK_NAMES.flatMap((name) => [400, 1000, 4500].map((target) => [name, target] as const)))(
    '%s reaches %d tokens within one filler unit, never past it',
    (name, target) => {
      const sample = retrievalTask(name).generate(request(3, target, 25));
      expect(sample.promptTokens).toBe(countWords(sample.prompt));
      expect(sample.promptTokens).toBeLessThanOrEqual(target);
      expect(target - sample.promptTokens).toBeLessThanOrEqual(unitWords[name]!);
    },
  );

  it.each([0, 10, 33, 50, 90, 100])('passkey: the pass key line sits at %d percent of the filler, within one sentence', (depth) => {
    const sample = retrievalTask('passkey').generate(request(11, 2000, depth));
    const needle = sample.needles[0]!;
    const head = 'There is an important info hidden inside a lot of irrelevant text. Find it and memorize them. I will quiz you about the important information there.\n';
    const before = sample.prompt.slice(head.length, needle.offset - 1);
    const after = sample.prompt.slice(needle.offset + needle.text.length + 1, sample.prompt.lastIndexOf('\nWhat is the pass key?'));
    const filler = before.length + after.length;
    expect(filler).toBe(sample.fillerUnits);
    expect(Math.abs(before.length - (depth / 100) * filler)).toBeLessThanOrEqual(FILLER_SENTENCE_CHARS);
  });

  it.each(['niah-single', 'niah-multikey', 'niah-multivalue', 'variable-tracking'] as const)(
    '%s: the needle placed at depth sits at the requested depth of the haystack, within one line',
    (name) => {
      for (const depth of [0, 25, 50, 75, 100]) {
        const sample = retrievalTask(name).generate(request(5, 3000, depth));
        const needle = sample.needles.find((placed) => placed.atDepth)!;
        const lines = occurrences(sample.prompt, FILLER);
        expect(lines).toBe(sample.fillerUnits);
        const linesBefore = occurrences(sample.prompt.slice(0, needle.offset), FILLER);
        expect(Math.abs(linesBefore - (depth / 100) * lines)).toBeLessThanOrEqual(1);
      }
    },
  );

  it('refuses a length, depth or seed it cannot use, saying what to give', () => {
    const task = retrievalTask('niah-single');
    expect(() => task.generate(request(1, 0))).toThrow(/positive whole number of tokens/);
    expect(() => task.generate(request(1, 500, 101))).toThrow(/outside 0–100/);
    expect(() => task.generate(request(-1))).toThrow(/seed -1/);
    expect(() => task.generate(request(1, 20))).toThrow(/give a length of at least \d+/);
    expect(() => retrievalTask('cwe').generate(request(1, 100_000))).toThrow(RetrievalTaskError);
    expect(() => retrievalTask('needle')).toThrow(/choose one of passkey, niah-single/);
  });
});

