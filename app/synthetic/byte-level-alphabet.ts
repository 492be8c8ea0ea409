/**
 * GPT-2's byte-level alphabet (`bytes_to_unicode` in openai/gpt-2 and HF tokenizers' ByteLevel):
 * each of the 256 byte values is one visible character, so BPE runs on strings and any UTF-8 text
 * encodes without an unknown token. Printable Latin-1 bytes stand for themselves; the others
 * (control characters, space, 0x7F-0xA0, 0xAD) map in order to U+0100 onward, so a space is 'Ġ'.
 */
export function byteToCharacter(): readonly string[] {
  const printable = (byte: number): boolean =>
    (byte >= 0x21 && byte <= 0x7e) || (byte >= 0xa1 && byte <= 0xac) || (byte >= 0xae && byte <= 0xff);
  let next = 0x100;
  return Array.from({ length: 256 }, (_, byte) => String.fromCodePoint(printable(byte) ? byte : next++));
}

/** UTF-8 bytes of a string (TextEncoder is not part of the pure core's ES library). */
export function utf8Bytes(text: string): number[] {
  const bytes: number[] = [];
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    if (code < 0x80) {
      bytes.push(code);
    } else if (code < 0x800) {
      bytes.push(0xc0 | (code >> 6), 0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
    } else {
      bytes.push(0xf0 | (code >> 18), 0x80 | ((code >> 12) & 0x3f), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
    }
  }
  return bytes;
}
