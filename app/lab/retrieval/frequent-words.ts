import { SeededRandom } from '../../synthetic/seeded-random.js';
import { fitFiller } from './fit-length.js';
import { fill } from './niah.js';
import { checkRequest, type RetrievalRequest, type RetrievalSample } from './retrieval-task.js';
import { shuffle } from './word-list.js';

/*
 * RULER's frequent words extraction (NVIDIA/RULER scripts/data/synthetic/freq_words_extraction.py,
 * template and answer prefix from constants.py `TASKS['freq_words_extraction']`): a vocabulary of
 * max_seq_length / 50 random 6-letter "coded" words, the top-ranked one replaced by "...", word k
 * repeated ⌊n·k^−α/ζ(α)⌋ times (Zipf, α = 2), shuffled; the answer is ranks 2–4. The filler unit is
 * n, the number of words the distribution is scaled to. No needle, so no depth.
 */
export const FWE_TEMPLATE =
  "Read the following coded text and track the frequency of each coded word. Find the three most frequently appeared coded words. {context}\nQuestion: Do not provide any explanation. Please ignore the dots '....'. What are the three most frequently appeared words in the above coded text?";
export const FWE_ANSWER_PREFIX = ' Answer: According to the coded text above, the three most frequently appeared words are:';
const CODED_WORD_LENGTH = 6;
// ζ(2) = π²/6, so the counts need no series
const ZETA_2 = (Math.PI * Math.PI) / 6;

export function generateFrequentWords(request: RetrievalRequest): RetrievalSample {
  checkRequest(request);
  // `vocab_size = max_seq_length // 50`; at least the noise word and the three answers
  const vocabularySize = Math.max(4, Math.floor((request.sequenceTokens ?? request.targetTokens) / 50));
  const vocabulary = codedVocabulary(vocabularySize, new SeededRandom(request.seed, 'fwe-vocabulary'));
  const template = FWE_TEMPLATE + FWE_ANSWER_PREFIX;
  const build = (words: number) => {
    const text: string[] = [];
    vocabulary.forEach((word, i) => {
      const k = i + 1;
      const count = Math.floor(words / (k * k) / ZETA_2);
      for (let c = 0; c < count; c++) text.push(word);
    });
    shuffle(text, new SeededRandom(request.seed, 'fwe-shuffle'));
    return { prompt: fill(template, { context: text.join(' '), query: '' }) };
  };
  const fit = fitFiller(build, request.countTokens, request.targetTokens, {
    minUnits: 0, maxUnits: request.targetTokens * 4 + 64, unitName: 'words', task: 'fwe',
  });
  return {
    task: 'fwe',
    seed: request.seed,
    prompt: fit.sample.prompt,
    answers: vocabulary.slice(1, 4),
    needles: [],
    depthPercent: null,
    promptTokens: fit.promptTokens,
    fillerUnits: fit.units,
  };
}

/** Distinct random lowercase words, sorted then shuffled, the first replaced by '...' (RULER treats the top rank as noise). */
function codedVocabulary(size: number, random: SeededRandom): string[] {
  const words = new Set<string>();
  while (words.size < size) {
    words.add(Array.from({ length: CODED_WORD_LENGTH }, () => String.fromCharCode(97 + random.nextInt(26))).join(''));
  }
  const vocabulary = shuffle([...words].sort(), random);
  vocabulary[0] = '...';
  return vocabulary;
}
