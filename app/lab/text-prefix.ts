import type { WindowSettings } from './eval-settings.js';

/** The text's tokens an evaluation feeds, and how much of the text was tokenized for them. */
export interface TextTokens {
  readonly tokens: number[];
  /** characters tokenized: the whole text, or the prefix that covers the windows */
  readonly characters: number;
  readonly whole: boolean;
}

/**
 * Characters per token a first prefix assumes: four times English's ~4 (and above code's, CJK's and
 * digits'); a text that needs more (long runs a tokenizer keeps whole) makes the prefix double.
 */
const CHARACTERS_PER_TOKEN = 16;
/** tokens past the last window's end that a prefix must hold, so the cut's token is never a window's */
const MARGIN_TOKENS = 64;

/** More of a file's text than read so far (about twice as much), or null when the text was all read. */
export type MoreText = () => string | null;

/** Tokens the windows cover when their count is capped (`--windows N`): the last window's end; null = all the text. */
export function tokensWindowsNeed(settings: WindowSettings): number | null {
  if (settings.maxWindows === null) return null;
  return (settings.maxWindows - 1) * settings.stride + settings.context;
}

/**
 * The first `needed` tokens of `text` as `encode` gives them for the whole text, from a prefix only
 * (a 60 MB text evaluated on one window tokenizes a few kilobytes, not 60 MB): a prefix of
 * needed · 16 characters, doubled while it holds fewer than needed + 64 tokens, then checked
 * against a prefix twice as long: the same first `needed` tokens from both means the cut moved no
 * token the windows use (a tokenizer's merges reach a few characters back from the end, never
 * kilobytes), else both double again. With `needed` null, or a text shorter than the prefix, the
 * whole text is encoded. `more`: `text` is only the start of a file, and this reads further.
 */
export function encodeTextPrefix(text: string, needed: number | null, encode: (text: string) => number[], more?: MoreText): TextTokens {
  if (needed === null) {
    for (let longer = more?.() ?? null; longer !== null; longer = more!()) text = longer;
    return { tokens: encode(text), characters: text.length, whole: true };
  }
  let length = Math.max(needed * CHARACTERS_PER_TOKEN, 1024);
  let complete = more === undefined;
  for (;;) {
    // Only the start of a file was read: read on (twice as much) until it covers the prefix, or it is all read.
    while (!complete && 2 * length >= text.length) {
      const longer = more!();
      if (longer === null) complete = true;
      else text = longer;
    }
    if (length >= text.length) return { tokens: encode(text), characters: text.length, whole: true };
    const cut = codePointCut(text, length);
    const tokens = encode(text.slice(0, cut));
    if (tokens.length >= needed + MARGIN_TOKENS) {
      const longer = codePointCut(text, 2 * length);
      const check = longer >= text.length ? encode(text) : encode(text.slice(0, longer));
      if (samePrefix(tokens, check, needed)) return { tokens: tokens.slice(0, needed), characters: cut, whole: false };
    }
    length *= 2;
  }
}

/** `length`, moved back one when it would split a surrogate pair (a tokenizer would see a lone surrogate). */
function codePointCut(text: string, length: number): number {
  if (length >= text.length) return text.length;
  const unit = text.charCodeAt(length - 1);
  return unit >= 0xd800 && unit <= 0xdbff ? length - 1 : length;
}

function samePrefix(a: readonly number[], b: readonly number[], count: number): boolean {
  if (a.length < count || b.length < count) return false;
  for (let i = 0; i < count; i++) if (a[i] !== b[i]) return false;
  return true;
}
