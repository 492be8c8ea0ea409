import { byteToCharacter, utf8Bytes } from './byte-level-alphabet.js';

export interface ByteLevelBpe {
  /** token string per id: the special tokens, the 256 byte characters in byte order, then merged tokens */
  readonly vocab: readonly string[];
  /** in rank order, each pair of existing tokens */
  readonly merges: ReadonlyArray<readonly [string, string]>;
}

/**
 * GPT-2's pre-tokenizer regex (HF ByteLevel `use_regex`): contractions, letter runs, digit runs and
 * punctuation runs, each with at most one leading space, then whitespace.
 */
const PRE_TOKENIZER = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/**
 * Trains a byte-level BPE on `corpus` until the vocabulary holds `vocabSize` tokens, as HF's
 * BpeTrainer does: repeatedly merge the most frequent adjacent pair within pre-tokenized words.
 * Ties go to the pair whose `a b` string sorts first (UTF-16 order), so the result is deterministic.
 */
export function trainByteLevelBpe(corpus: string, specialTokens: readonly string[], vocabSize: number): ByteLevelBpe {
  const alphabet = byteToCharacter();
  const vocab = [...specialTokens, ...alphabet];
  const known = new Set(vocab);
  const merges: Array<[string, string]> = [];

  const wordCounts = new Map<string, number>();
  for (const match of corpus.matchAll(PRE_TOKENIZER)) {
    const word = utf8Bytes(match[0]).map((byte) => alphabet[byte]).join('');
    wordCounts.set(word, (wordCounts.get(word) ?? 0) + 1);
  }
  const words = [...wordCounts].map(([word, count]) => ({ symbols: [...word], count }));

  while (vocab.length < vocabSize) {
    const best = mostFrequentPair(words);
    if (best === null) {
      throw new RangeError(`BPE corpus exhausted after ${merges.length} merges: ${vocab.length} of ${vocabSize} tokens; lengthen the corpus`);
    }
    const [left, right] = best;
    merges.push([left, right]);
    const merged = left + right;
    // Two merge paths can spell the same string; the token then exists once, and the merge still counts
    if (!known.has(merged)) {
      known.add(merged);
      vocab.push(merged);
    }
    for (const word of words) word.symbols = mergeSymbols(word.symbols, left, right);
  }
  return { vocab, merges };
}

function mostFrequentPair(words: ReadonlyArray<{ symbols: string[]; count: number }>): [string, string] | null {
  const counts = new Map<string, number>();
  for (const { symbols, count } of words) {
    for (let i = 0; i + 1 < symbols.length; i++) {
      const key = `${symbols[i]} ${symbols[i + 1]}`;
      counts.set(key, (counts.get(key) ?? 0) + count);
    }
  }
  let bestKey: string | null = null;
  let bestCount = 0;
  for (const [key, count] of counts) {
    if (count > bestCount || (count === bestCount && bestKey !== null && key < bestKey)) {
      bestKey = key;
      bestCount = count;
    }
  }
  if (bestKey === null) return null;
  // byte-level symbols never contain a space, so the key splits unambiguously
  const [left, right] = bestKey.split(' ');
  return [left, right];
}

function mergeSymbols(symbols: string[], left: string, right: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < symbols.length; i++) {
    if (i + 1 < symbols.length && symbols[i] === left && symbols[i + 1] === right) {
      out.push(left + right);
      i++;
    } else {
      out.push(symbols[i]);
    }
  }
  return out;
}
