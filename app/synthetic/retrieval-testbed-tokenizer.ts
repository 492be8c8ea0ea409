import { FILLER } from '../lab/retrieval/filler.js';
import { PASSKEY_QUESTION, PASSKEY_TASK_DESCRIPTION, passkeyLine } from '../lab/retrieval/passkey.js';
import type { SyntheticTokenizer } from './synthetic-tokenizer.js';

/** The testbed's special tokens, at ids 0–2 as the other synthetic models have them. */
export const TESTBED_SPECIALS = ['<unk>', '<s>', '</s>'] as const;

/**
 * The words of the passkey prompt (task description, filler, pass key line, question), split as BERT's
 * pre-tokenizer splits them (whitespace, then each punctuation character alone), in first-seen order.
 */
export function passkeyWords(): string[] {
  const text = [PASSKEY_TASK_DESCRIPTION, FILLER, passkeyLine(0), PASSKEY_QUESTION].join('\n');
  const words = text.split(/\s+/).flatMap((word) => word.split(/([.?!,:;])/)).filter((word) => word !== '' && !/\d/.test(word));
  return [...new Set(words)];
}

/**
 * The testbed's vocabulary: specials, the digits as word starts ("7") and as continuations ("##1"),
 * then the passkey prompt's words. Small on purpose: each token gets one exact code in the model
 * (retrieval-testbed-weights.ts), so the model's matching is exact, and any other word is `<unk>`.
 */
export function testbedVocabulary(): string[] {
  const digits = Array.from({ length: 10 }, (_, digit) => String(digit));
  return [...TESTBED_SPECIALS, ...digits, ...digits.map((digit) => `##${digit}`), ...passkeyWords()];
}

/**
 * A WordPiece tokenizer (HF `tokenizers`, BERT's pre-tokenizer and decoder, no normalizer): a number
 * splits greedily into its first digit and one `##` continuation per further digit, so "71432"
 * decodes back to "71432", and a word outside the vocabulary is `<unk>`. Encoding prepends `<s>`.
 */
export function retrievalTestbedTokenizer(maxPositionEmbeddings: number): SyntheticTokenizer {
  const vocab = testbedVocabulary();
  const addedTokens = TESTBED_SPECIALS.map((content, id) => ({
    id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  }));
  const [unk, bos, eos] = TESTBED_SPECIALS;
  const tokenizerJson = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens,
    normalizer: null,
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: bos, type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } },
      ],
      special_tokens: { [bos]: { id: bos, ids: [1], tokens: [bos] } },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: unk,
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocab.map((token, id) => [token, id])),
    },
  };
  const tokenizerConfig = {
    add_bos_token: true,
    add_eos_token: false,
    bos_token: bos,
    eos_token: eos,
    unk_token: unk,
    pad_token: null,
    clean_up_tokenization_spaces: true,
    model_max_length: maxPositionEmbeddings,
    tokenizer_class: 'PreTrainedTokenizerFast',
    added_tokens_decoder: Object.fromEntries(addedTokens.map(({ id, ...token }) => [String(id), token])),
  };
  // the specials: decoding should neither end on a copied `</s>` nor print `<unk>`
  return { tokenizerJson, tokenizerConfig, vocab, mutedTokenIds: [0, 1, 2] };
}
