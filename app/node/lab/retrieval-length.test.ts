import { describe, expect, it } from 'vitest';
import { FILLER } from '../../lab/retrieval/filler.js';
import { retrievalTask } from '../../lab/retrieval/registry.js';
import { RETRIEVAL_TASK_NAMES, type RetrievalTaskName } from '../../lab/retrieval/retrieval-task.js';
import { WORDS } from '../../lab/retrieval/word-list.js';
import { findModelFolder } from '../model/model-folder.js';
import { loadTokenizer } from '../model/load-tokenizer.js';
import { storiesDir } from '../test-support/stories.js';

// The retrieval generators under the real stories260k tokenizer (a 512-token vocabulary, so the
// filler costs many more tokens than words): the prompt as a run encodes it (with BOS) reaches the
// target within one unit of filler, and the needle lands at the requested depth in tokens.
const tokenizer = loadTokenizer(findModelFolder(storiesDir()));
const countTokens = (text: string): number => tokenizer.encode(text).length;
const verbatim = (text: string): number => tokenizer.encodeVerbatim(text).length;

const sentences = FILLER.split(/(?<=\.) /);
const sentenceTokens = Math.max(...sentences.map((sentence) => verbatim(` ${sentence}`))) + 1;
const lineTokens = verbatim(`\n${FILLER}`) + 1;
const unitTokens: Record<RetrievalTaskName, number> = {
  passkey: sentenceTokens,
  'niah-single': lineTokens,
  'niah-multikey': lineTokens,
  'niah-multivalue': lineTokens,
  'variable-tracking': verbatim(` ${FILLER}\n`) + 1,
  // one more distinct word: its one entry "N. word" below 4,096 tokens
  cwe: Math.max(...WORDS.map((word) => verbatim(` 999. ${word}`))) + 1,
  // one more word of scale adds at most a few coded words; three 6-letter words at one token per letter
  fwe: 3 * 7,
};

describe('retrieval prompts under the stories260k tokenizer', () => {
  it.each(RETRIEVAL_TASK_NAMES.flatMap((name) => [name === 'cwe' ? 1400 : 600, 2048].map((target) => [name, target] as const)))(
    '%s reaches %d tokens within one unit of filler',
    (name, target) => {
      const sample = retrievalTask(name).generate({ seed: 17, targetTokens: target, depthPercent: 50, countTokens });
      expect(sample.promptTokens).toBe(countTokens(sample.prompt));
      expect(sample.promptTokens).toBeLessThanOrEqual(target);
      expect(target - sample.promptTokens).toBeLessThanOrEqual(unitTokens[name]);
    },
  );

  it.each([0, 30, 50, 80, 100])('passkey: the pass key sits at %d percent of the filler tokens, within one sentence', (depth) => {
    const sample = retrievalTask('passkey').generate({ seed: 2, targetTokens: 1500, depthPercent: depth, countTokens });
    const needle = sample.needles[0]!;
    const headEnd = sample.prompt.indexOf('\n') + 1;
    const before = verbatim(sample.prompt.slice(headEnd, needle.offset - 1));
    const after = verbatim(sample.prompt.slice(needle.offset + needle.text.length + 1, sample.prompt.lastIndexOf('\n')));
    expect(Math.abs(before - (depth / 100) * (before + after))).toBeLessThanOrEqual(sentenceTokens);
  });

  it.each([0, 30, 50, 80, 100])('niah-single: the needle sits at %d percent of the haystack tokens, within one line', (depth) => {
    const sample = retrievalTask('niah-single').generate({ seed: 2, targetTokens: 1500, depthPercent: depth, countTokens });
    const needle = sample.needles[0]!;
    const contextStart = sample.prompt.indexOf('\n') + 1;
    const contextEnd = sample.prompt.lastIndexOf('\nWhat is the special magic number');
    const before = verbatim(sample.prompt.slice(contextStart, needle.offset));
    const after = verbatim(sample.prompt.slice(needle.offset + needle.text.length, contextEnd));
    expect(Math.abs(before - (depth / 100) * (before + after))).toBeLessThanOrEqual(lineTokens);
  });
});
