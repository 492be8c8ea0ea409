/**
 * Incremental detokenization (the prefix/read-offset scheme of text-generation-inference and
 * transformers' TextStreamer): text is emitted once the decoded window no longer ends in U+FFFD, so a
 * character split over byte-fallback pieces (`<0xF0><0x9F><0x98><0x80>`) comes out whole, and
 * decoders that strip or merge spaces at a window's start (SentencePiece's Metaspace + Strip) see the
 * same first token in both windows they compare.
 */
export class TokenTextStream {
  readonly #decode: (ids: readonly number[]) => string;
  readonly #ids: number[] = [];
  #prefixOffset = 0;
  #readOffset = 0;

  constructor(decode: (ids: readonly number[]) => string) {
    this.#decode = decode;
  }

  /** Adds a token; returns the text it completes ('' while a character is still partial). */
  push(tokenId: number): string {
    this.#ids.push(tokenId);
    const prefixText = this.#decode(this.#ids.slice(this.#prefixOffset, this.#readOffset));
    const newText = this.#decode(this.#ids.slice(this.#prefixOffset));
    if (newText.length <= prefixText.length || newText.endsWith('\uFFFD')) return '';
    this.#prefixOffset = this.#readOffset;
    this.#readOffset = this.#ids.length;
    return newText.slice(prefixText.length);
  }

  /** At the end: whatever is still held back (an incomplete character decodes to U+FFFD). */
  flush(): string {
    if (this.#readOffset === this.#ids.length) return '';
    const prefixText = this.#decode(this.#ids.slice(this.#prefixOffset, this.#readOffset));
    const newText = this.#decode(this.#ids.slice(this.#prefixOffset));
    this.#prefixOffset = this.#readOffset = this.#ids.length;
    return newText.length > prefixText.length ? newText.slice(prefixText.length) : '';
  }
}
