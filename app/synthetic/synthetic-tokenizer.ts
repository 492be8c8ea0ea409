import { byteToCharacter } from './byte-level-alphabet.js';
import { trainByteLevelBpe } from './bpe-trainer.js';
import type { SyntheticModelSpec } from './synthetic-spec.js';
import { TOKENIZER_CORPUS } from './tokenizer-corpus.js';

export interface SyntheticTokenizer {
  /** tokenizer.json: an HF `tokenizers` byte-level BPE */
  readonly tokenizerJson: Record<string, unknown>;
  /** tokenizer_config.json */
  readonly tokenizerConfig: Record<string, unknown>;
  /** token string per id, length vocabSize */
  readonly vocab: readonly string[];
  /** special tokens and the byte tokens of control characters and lone UTF-8 bytes: the model never picks these */
  readonly mutedTokenIds: readonly number[];
}

/**
 * A byte-level BPE like GPT-2's and Llama 3's (`ByteLevel` pre-tokenizer and decoder), with Llama 2's
 * special tokens at ids 0-2 (`<unk>`, `<s>`, `</s>`), the 256 byte tokens at 3-258 and merges
 * learned from TOKENIZER_CORPUS up to the model's vocabulary. Every id decodes to bytes, and any text
 * encodes without `<unk>`. Encoding prepends `<s>`, as Llama's tokenizer does.
 */
export function syntheticTokenizer(spec: SyntheticModelSpec): SyntheticTokenizer {
  const specials = [] as string[];
  specials[spec.unkTokenId] = '<unk>';
  specials[spec.bosTokenId] = '<s>';
  specials[spec.eosTokenId] = '</s>';
  if (specials.length !== 3 || specials.some((token) => token === undefined)) {
    throw new RangeError('the synthetic tokenizer expects unk, bos and eos at ids 0, 1 and 2 in some order');
  }
  const trained = trainByteLevelBpe(TOKENIZER_CORPUS, specials, Math.min(spec.vocabSize, spec.trainedVocabSize));
  const vocab = withGeneratedTokens(trained.vocab, spec.vocabSize);
  const merges = trained.merges;
  const bos = specials[spec.bosTokenId] as string;

  const addedTokens = specials.map((content, id) => ({
    id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  }));
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  const tokenizerJson = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens,
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: bos, type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } },
      ],
      special_tokens: { [bos]: { id: bos, ids: [spec.bosTokenId], tokens: [bos] } },
    },
    decoder: byteLevel,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: Object.fromEntries(vocab.map((token, id) => [token, id])),
      // "a b" strings, the format every tokenizers version reads (byte-level tokens hold no space)
      merges: merges.map(([left, right]) => `${left} ${right}`),
    },
  };

  const tokenizerConfig = {
    add_bos_token: true,
    add_eos_token: false,
    bos_token: bos,
    eos_token: specials[spec.eosTokenId],
    unk_token: specials[spec.unkTokenId],
    pad_token: null,
    clean_up_tokenization_spaces: false,
    model_max_length: spec.maxPositionEmbeddings,
    tokenizer_class: 'PreTrainedTokenizerFast',
    added_tokens_decoder: Object.fromEntries(addedTokens.map(({ id, ...token }) => [String(id), token])),
  };

  return { tokenizerJson, tokenizerConfig, vocab, mutedTokenIds: mutedTokenIds(specials.length) };
}

/** Specials, then the byte tokens that are not tab, newline or printable ASCII. */
function mutedTokenIds(specialCount: number): number[] {
  const alphabet = byteToCharacter();
  const readable = (byte: number): boolean => byte === 0x09 || byte === 0x0a || (byte >= 0x20 && byte <= 0x7e);
  const bytes = alphabet.map((_, byte) => byte).filter((byte) => !readable(byte)).map((byte) => specialCount + byte);
  return [...Array.from({ length: specialCount }, (_, id) => id), ...bytes];
}

/**
 * The vocabulary filled up to `vocabSize` with generated words: the BPE trainer needs minutes for a
 * 152k vocabulary (and a corpus to match), while the scale models need the real size only for the
 * shapes it gives the embedding, the LM head and the logits. A generated token is a space and four
 * lowercase letters (`Ġ` is the byte-level character of the space) enumerated from "aaaa", skipping
 * any the trainer made: encoding never produces one (no merge leads there), but every id decodes to
 * printable text, so whatever the random model picks reads as a word.
 */
function withGeneratedTokens(trained: readonly string[], vocabSize: number): readonly string[] {
  if (trained.length >= vocabSize) return trained;
  const vocab = [...trained];
  const known = new Set(vocab);
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  for (let n = 0; vocab.length < vocabSize; n++) {
    if (n >= 26 ** 4) throw new RangeError(`cannot generate ${vocabSize} tokens from four-letter words`);
    const word = `\u0120${letters[Math.floor(n / 17_576) % 26]}${letters[Math.floor(n / 676) % 26]}${letters[Math.floor(n / 26) % 26]}${letters[n % 26]}`;
    if (known.has(word)) continue;
    known.add(word);
    vocab.push(word);
  }
  return vocab;
}
