import type { CountTokens } from './retrieval-task.js';

/** A tokenizer stand-in for the pure tests: whitespace-separated words. */
export const countWords: CountTokens = (text) => text.split(/\s+/).filter((word) => word.length > 0).length;

/** Non-overlapping occurrences of `needle` in `text`. */
export function occurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}
