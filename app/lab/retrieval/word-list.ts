import * as randomWords from 'random-words';
import type { SeededRandom } from '../../synthetic/seeded-random.js';

/**
 * RULER draws its words from wonderwords' noun, adjective and verb lists (niah.py keys
 * `f"{adj}-{noun}"`, common_words_extraction.py `nouns + adjs + verbs`), a Python package. kvscope
 * uses the random-words package's list of 1,952 common English words instead (npm, bundled, sorted
 * and deduplicated as RULER does `sorted(list(set(words)))`), so nothing is fetched at run time.
 */
export const WORDS: readonly string[] = [...new Set(bundledWords())].sort();

/** random-words 2.0.1 exports `wordList` while its index.d.ts declares `wordsList`: read the export that exists, checked. */
function bundledWords(): string[] {
  const list: unknown = (randomWords as Record<string, unknown>)['wordList'];
  if (!Array.isArray(list) || list.length < 1000 || !list.every((word) => typeof word === 'string')) {
    throw new Error('the random-words package no longer exports its word list as `wordList`; pin random-words 2.0.1 (npm ci)');
  }
  return list as string[];
}

/** A `word-word` key, as RULER's `adj-noun` needle keys. */
export function randomKey(random: SeededRandom): string {
  return `${WORDS[random.nextInt(WORDS.length)]}-${WORDS[random.nextInt(WORDS.length)]}`;
}

/** Python's `random.sample(population, k)` in effect: k distinct items in random order (partial Fisher–Yates). */
export function sample<T>(population: readonly T[], count: number, random: SeededRandom): T[] {
  const pool = [...population];
  for (let i = 0; i < count; i++) {
    const j = i + random.nextInt(pool.length - i);
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  return pool.slice(0, count);
}

/** `random.shuffle`, Fisher–Yates, in place. */
export function shuffle<T>(items: T[], random: SeededRandom): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = random.nextInt(i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
