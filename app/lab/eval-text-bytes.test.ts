import { describe, expect, it } from 'vitest';
import { decodeEvalText, invalidUtf8Offset } from './eval-text-bytes.js';

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('an evaluation text checked as UTF-8 text', () => {
  it('accepts well-formed UTF-8 of every length, and finds the first byte that breaks it', () => {
    expect(invalidUtf8Offset(utf8('ascii, é, €, 𝄞, 中文'))).toBeNull();
    expect(invalidUtf8Offset(bytes(0x61, 0xe9, 0x62))).toBe(1); // Latin-1 é
    expect(invalidUtf8Offset(bytes(0xc0, 0xaf))).toBe(0); // overlong '/'
    expect(invalidUtf8Offset(bytes(0xe0, 0x80, 0xaf))).toBe(0); // overlong, 3 bytes
    expect(invalidUtf8Offset(bytes(0x61, 0xed, 0xa0, 0x80))).toBe(1); // a UTF-16 surrogate encoded
    expect(invalidUtf8Offset(bytes(0xf4, 0x90, 0x80, 0x80))).toBe(0); // past U+10FFFF
    expect(invalidUtf8Offset(bytes(0x61, 0x62, 0xe2, 0x82))).toBe(2); // cut mid-character
    expect(invalidUtf8Offset(bytes(0x80))).toBe(0); // a lone continuation byte
  });

  it('agrees with a fatal TextDecoder on every two-byte sequence', () => {
    const decoder = new TextDecoder('utf-8', { fatal: true });
    for (let a = 0x80; a < 0x100; a++) {
      for (let b = 0; b < 0x100; b += 3) {
        let valid = true;
        try {
          decoder.decode(bytes(a, b));
        } catch {
          valid = false;
        }
        expect(invalidUtf8Offset(bytes(a, b)) === null, `${a.toString(16)} ${b.toString(16)}`).toBe(valid);
      }
    }
  });

  it('decodes a text, and refuses binaries, invalid UTF-8 and empty texts naming the source', () => {
    expect(decodeEvalText(utf8('Once upon a time.\n'), '--text t')).toBe('Once upon a time.\n');
    expect(() => decodeEvalText(bytes(0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0), '--text /bin/ls')).toThrow('--text /bin/ls looks like a binary file, not a text (byte 7 is NUL).');
    expect(() => decodeEvalText(bytes(...Array.from({ length: 200 }, (_, i) => (i % 5 === 0 ? 0x01 : 0x41))), '--text x')).toThrow(/binary file.*control character 0x01/);
    expect(() => decodeEvalText(bytes(0x61, 0xe9), '--text latin1.txt')).toThrow('--text latin1.txt is not valid UTF-8 (the first invalid byte is at offset 1).');
    expect(() => decodeEvalText(new Uint8Array(0), '--text e')).toThrow(/--text e is empty: there is nothing to evaluate\. .*smallest window is 3 tokens/);
    expect(() => decodeEvalText(utf8(' \n\t'), '--text w')).toThrow('--text w is empty (only whitespace)');
  });
});
