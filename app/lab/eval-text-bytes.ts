import { getTextEncoding } from '@bufbuild/protobuf/wire';
import { EvalInputError } from './lab-errors.js';

/**
 * An evaluation text as bytes, checked before any work: a text that is not UTF-8, or a binary file
 * given by mistake (`--text /bin/ls`), would otherwise be decoded with replacement characters and
 * scored (a PPL of 4.6e10 with exit 0). `source` names the input in the messages (`--text FILE`), which say what to do (every
 * front end prints them whole).
 */
export function decodeEvalText(bytes: Uint8Array, source: string): string {
  const binary = binaryByte(bytes);
  if (binary !== null) {
    throw new EvalInputError(`${source} looks like a binary file, not a text (byte ${binary.offset} is ${binary.what}). ` +
      'Pass a plain UTF-8 text file (a corpus such as wikitext-2\'s test split); convert other encodings first, e.g. iconv -f latin1 -t utf-8.');
  }
  const invalid = invalidUtf8Offset(bytes);
  if (invalid !== null) {
    throw new EvalInputError(`${source} is not valid UTF-8 (the first invalid byte is at offset ${invalid}). ` +
      'Convert the text to UTF-8 first (e.g. iconv -f latin1 -t utf-8 FILE > FILE.utf8), or pass another text.');
  }
  // protobuf-es's UTF-8 decoder (the pure core's ES library has no TextDecoder type); the bytes are valid, so nothing is replaced.
  const text = getTextEncoding().decodeUtf8(bytes);
  if (text.trim() === '') {
    throw new EvalInputError(`${source} is empty${bytes.length > 0 ? ' (only whitespace)' : ''}: there is nothing to evaluate. ` +
      'Pass a text with at least one window of --context tokens (the smallest window is 3 tokens; the default context is 512).');
  }
  return text;
}

/**
 * A NUL byte, or control characters (other than tab, newlines, form feed and escape) in more than
 * 1 of the first 4,096 bytes in 100: what text never holds and executables, archives and images do.
 */
function binaryByte(bytes: Uint8Array): { offset: number; what: string } | null {
  const nul = bytes.indexOf(0);
  if (nul >= 0) return { offset: nul, what: 'NUL' };
  const head = Math.min(bytes.length, 4096);
  let controls = 0;
  let first = -1;
  for (let i = 0; i < head; i++) {
    const byte = bytes[i]!;
    if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c && byte !== 0x1b) {
      controls++;
      if (first < 0) first = i;
    }
  }
  return controls * 100 > head ? { offset: first, what: `the control character 0x${bytes[first]!.toString(16).padStart(2, '0')}` } : null;
}

/**
 * The offset of the first byte that breaks UTF-8 well-formedness (Unicode §3.9, table 3-7: no
 * overlong forms, no surrogates, nothing past U+10FFFF, no truncated sequence), or null.
 */
export function invalidUtf8Offset(bytes: Uint8Array): number | null {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b0 = bytes[i]!;
    if (b0 < 0x80) {
      i++;
      continue;
    }
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (b0 >= 0xc2 && b0 <= 0xdf) length = 2;
    else if (b0 >= 0xe0 && b0 <= 0xef) {
      length = 3;
      if (b0 === 0xe0) low = 0xa0;
      if (b0 === 0xed) high = 0x9f;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      length = 4;
      if (b0 === 0xf0) low = 0x90;
      if (b0 === 0xf4) high = 0x8f;
    } else return i;
    if (i + length > n) return i;
    const b1 = bytes[i + 1]!;
    if (b1 < low || b1 > high) return i;
    for (let k = 2; k < length; k++) {
      const b = bytes[i + k]!;
      if (b < 0x80 || b > 0xbf) return i;
    }
    i += length;
  }
  return null;
}

/** `bytes` up to the last whole UTF-8 character: a prefix read from a file may end inside one. */
export function wholeCharacters(bytes: Uint8Array): Uint8Array {
  // Walk back over at most 3 continuation bytes to the last lead byte; keep it only when its sequence is complete.
  let lead = bytes.length - 1;
  while (lead >= 0 && bytes.length - lead <= 4 && (bytes[lead]! & 0xc0) === 0x80) lead--;
  if (lead < 0) return bytes;
  const first = bytes[lead]!;
  const length = first < 0x80 ? 1 : first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
  return lead + length <= bytes.length ? bytes : bytes.subarray(0, lead);
}
