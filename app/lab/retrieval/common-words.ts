import { SeededRandom } from '../../synthetic/seeded-random.js';
import { fitFiller } from './fit-length.js';
import { fill } from './niah.js';
import { checkRequest, type RetrievalRequest, type RetrievalSample } from './retrieval-task.js';
import { sample, shuffle, WORDS } from './word-list.js';

/*
 * RULER's common words extraction (NVIDIA/RULER scripts/data/synthetic/common_words_extraction.py,
 * template and answer prefix from constants.py `TASKS['common_words_extraction']`): a numbered list
 * in which 10 words appear often and the rest rarely, preceded by one solved example. Below 4,096
 * tokens RULER repeats the common words 6 times and the others once (example: 20 words, 3 and 1);
 * from 4,096 on, 30 and 3 (example: 40 words, 10 and 3). The filler unit is the number of distinct
 * words. No needle, so no depth.
 */
export const CWE_TEMPLATE =
  'Below is a numbered list of words. In these words, some appear more often than others. Memorize the ones that appear most often.\n{context}\nQuestion: What are the 10 most common words in the above list?';
export const CWE_ANSWER_PREFIX = ' Answer: The top 10 words that appear most often in the list are:';
const COMMON_WORDS = 10;

export function generateCommonWords(request: RetrievalRequest): RetrievalSample {
  checkRequest(request);
  // `if args.max_seq_length < 4096`: the sequence length, not the prompt's
  const long = (request.sequenceTokens ?? request.targetTokens) >= 4096;
  const template = CWE_TEMPLATE + CWE_ANSWER_PREFIX;
  const build = (distinctWords: number) => {
    // a fresh stream per length, as RULER re-seeds each shuffle: the same seed and length give the same list
    const random = new SeededRandom(request.seed, 'cwe');
    const example = wordListExample(long ? 40 : 20, long ? 10 : 3, long ? 3 : 1, random);
    const task = wordListExample(distinctWords, long ? 30 : 6, long ? 3 : 1, random);
    const solved = `${fill(template, { context: example.context, query: '' })}${numbered(example.common).join(' ')}`;
    return { prompt: `${solved}\n${fill(template, { context: task.context, query: '' })}`, answers: task.common };
  };
  const fit = fitFiller(build, request.countTokens, request.targetTokens, {
    minUnits: COMMON_WORDS, maxUnits: WORDS.length, unitName: 'distinct words', task: 'cwe',
  });
  return {
    task: 'cwe',
    seed: request.seed,
    prompt: fit.sample.prompt,
    answers: fit.sample.answers,
    needles: [],
    depthPercent: null,
    promptTokens: fit.promptTokens,
    fillerUnits: fit.units,
  };
}

/** `get_example(num_words, common_repeats, uncommon_repeats, common_nums)`. */
function wordListExample(distinctWords: number, commonRepeats: number, uncommonRepeats: number, random: SeededRandom) {
  const drawn = sample(WORDS, distinctWords, random);
  const common = drawn.slice(0, COMMON_WORDS);
  const uncommon = drawn.slice(COMMON_WORDS);
  const list = shuffle([...repeat(common, commonRepeats), ...repeat(uncommon, uncommonRepeats)], random);
  return { context: numbered(list).join(' '), common };
}

function repeat(words: readonly string[], times: number): string[] {
  return Array.from({ length: times }, () => words).flat();
}

/** "1. word1 2. word2 …" */
function numbered(words: readonly string[]): string[] {
  return words.map((word, i) => `${i + 1}. ${word}`);
}
