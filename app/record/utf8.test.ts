import { describe, expect, it } from 'vitest';
import { encodeUtf8 } from './utf8.js';

describe('encodeUtf8', () => {
  it('matches TextEncoder on ASCII, accents, CJK, emoji and lone surrogates', () => {
    for (const text of ['', 'Once upon a time', 'café ñ', '小さな女の子', 'ball 🎈 and 👩‍👧', 'lone \ud800 high', 'lone \udc00 low', '\u{10ffff}']) {
      expect([...encodeUtf8(text)], text).toEqual([...new TextEncoder().encode(text)]);
    }
  });
});
