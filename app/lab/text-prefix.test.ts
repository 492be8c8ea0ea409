import { describe, expect, it } from 'vitest';
import { encodeTextPrefix, tokensWindowsNeed } from './text-prefix.js';

/** A word-level stand-in for a tokenizer: one token per word, with a token that merges across words ("of the"). */
function encodeWords(text: string): number[] {
  const ids: number[] = [];
  const words = text.split(/\s+/).filter((word) => word !== '');
  for (let i = 0; i < words.length; i++) {
    if (words[i] === 'of' && words[i + 1] === 'the') {
      ids.push(1);
      i++;
    } else ids.push(2 + (words[i]!.length % 50));
  }
  return ids;
}

describe('only the text the windows cover is tokenized', () => {
  const text = Array.from({ length: 20_000 }, (_, i) => (i % 7 === 0 ? 'of the' : `word${i % 13}`)).join(' ');

  it('gives the first tokens of the whole text\'s encoding, from a prefix', () => {
    let encoded = 0;
    const counting = (part: string): number[] => {
      encoded += part.length;
      return encodeWords(part);
    };
    const result = encodeTextPrefix(text, 300, counting);
    expect(result.whole).toBe(false);
    expect(result.tokens).toEqual(encodeWords(text).slice(0, 300));
    expect(result.characters).toBeLessThan(text.length / 5);
    expect(encoded).toBeLessThan(text.length / 2);
  });

  it('extends a prefix too short for the windows (long tokens), and encodes the whole text without a window cap or when the text is short', () => {
    const long = Array.from({ length: 3000 }, (_, i) => `${'x'.repeat(40)}${i}`).join(' ');
    const result = encodeTextPrefix(long, 200, encodeWords);
    expect(result.tokens).toEqual(encodeWords(long).slice(0, 200));
    expect(encodeTextPrefix(text, null, encodeWords)).toEqual({ tokens: encodeWords(text), characters: text.length, whole: true });
    expect(encodeTextPrefix('of the end', 5, encodeWords).whole).toBe(true);
  });

  it('reads further into a file whose start holds too few tokens, and stops at its end', () => {
    const file = text;
    let read = 2000;
    const reads: number[] = [];
    const more = (): string | null => {
      if (read >= file.length) return null;
      read = Math.min(file.length, 2 * read);
      reads.push(read);
      return file.slice(0, read);
    };
    const result = encodeTextPrefix(file.slice(0, 2000), 1000, encodeWords, more);
    expect(result.tokens).toEqual(encodeWords(file).slice(0, 1000));
    expect(reads.length).toBeGreaterThan(0);
    expect(read).toBeLessThan(file.length);
    // A file shorter than the windows need: read to its end, encoded whole.
    read = 2000;
    const all = encodeTextPrefix(file.slice(0, 2000), 1e9, encodeWords, more);
    expect(all).toEqual({ tokens: encodeWords(file), characters: file.length, whole: true });
  });

  it('never cuts a surrogate pair', () => {
    const emoji = '😀 '.repeat(5000);
    const seen: string[] = [];
    encodeTextPrefix(emoji, 10, (part) => {
      seen.push(part);
      return encodeWords(part);
    });
    for (const part of seen) expect(part.charCodeAt(part.length - 1) >= 0xd800 && part.charCodeAt(part.length - 1) <= 0xdbff).toBe(false);
  });

  it('needs (windows − 1) · stride + context tokens', () => {
    expect(tokensWindowsNeed({ context: 512, stride: 256, prefill: 256, maxWindows: 3 })).toBe(1024);
    expect(tokensWindowsNeed({ context: 512, stride: 512, prefill: 256, maxWindows: null })).toBeNull();
  });
});
