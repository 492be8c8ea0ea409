import { Tokenizer } from '@huggingface/tokenizers';
import { describe, expect, it } from 'vitest';
import { byteToCharacter, utf8Bytes } from './byte-level-alphabet.js';
import { trainByteLevelBpe } from './bpe-trainer.js';
import { syntheticModelSpec } from './synthetic-spec.js';
import { syntheticTokenizer } from './synthetic-tokenizer.js';

const spec = syntheticModelSpec('synthetic');
const synthetic = syntheticTokenizer(spec);
const tokenizer = new Tokenizer(
  synthetic.tokenizerJson as unknown as ConstructorParameters<typeof Tokenizer>[0],
  synthetic.tokenizerConfig as ConstructorParameters<typeof Tokenizer>[1],
);

describe('synthetic tokenizer (byte-level BPE)', () => {
  it('has exactly vocab_size distinct tokens, specials at Llama 2 ids', () => {
    expect(synthetic.vocab).toHaveLength(spec.vocabSize);
    expect(new Set(synthetic.vocab).size).toBe(spec.vocabSize);
    expect(synthetic.vocab.slice(0, 3)).toEqual(['<unk>', '<s>', '</s>']);
    expect(synthetic.vocab[3 + 0x41]).toBe('A');
    expect(synthetic.vocab[3 + 0x20]).toBe('Ġ'); // GPT-2's stand-in for a space
  });

  it('loads in @huggingface/tokenizers, prepends <s> and round-trips text', () => {
    const encoded = tokenizer.encode('Once upon a time');
    expect(encoded.ids[0]).toBe(spec.bosTokenId);
    // learned merges make common words single tokens
    expect(encoded.ids.length).toBeLessThanOrEqual(8);
    for (const text of ['Once upon a time, there was a little cat.', 'Hello, wörld! 123 ✓ 😀', '  two  spaces\nand a tab\t.']) {
      expect(tokenizer.decode(tokenizer.encode(text).ids, { skip_special_tokens: true })).toBe(text);
    }
  });

  it('decodes every id, and the unmuted ones to printable text', () => {
    const muted = new Set(synthetic.mutedTokenIds);
    expect([0, 1, 2].every((id) => muted.has(id))).toBe(true);
    for (let id = 0; id < spec.vocabSize; id++) {
      const text = tokenizer.decode([id]);
      if (!muted.has(id)) expect(text, `id ${id}`).toMatch(/^[\t\n\x20-\x7e]+$/);
    }
    expect(muted.size).toBe(3 + 256 - 97); // 95 printable ASCII bytes, tab and newline stay
  });

  it('trains deterministically and refuses a corpus too small for the vocabulary', () => {
    expect(trainByteLevelBpe('the cat the hat', [], 260)).toEqual(trainByteLevelBpe('the cat the hat', [], 260));
    expect(() => trainByteLevelBpe('ab', [], 300)).toThrow(/corpus exhausted/);
  });
});

describe('byte-level alphabet', () => {
  it("maps the 256 bytes to 256 distinct visible characters as GPT-2's bytes_to_unicode", () => {
    const alphabet = byteToCharacter();
    expect(new Set(alphabet).size).toBe(256);
    expect([alphabet[0x21], alphabet[0x20], alphabet[0x0a], alphabet[0xad]]).toEqual(['!', 'Ġ', 'Ċ', 'Ń']);
  });

  it('encodes UTF-8 like the platform', () => {
    for (const text of ['a', 'é', '✓', '😀', 'mixed ✓ 😀 text']) {
      expect(utf8Bytes(text)).toEqual([...Buffer.from(text, 'utf8')]);
    }
  });
});
