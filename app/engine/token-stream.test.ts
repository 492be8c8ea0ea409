import { describe, expect, it } from 'vitest';
import { TokenTextStream } from './token-stream.js';

/**
 * A byte-fallback decoder shaped like SentencePiece's: ids < 256 are raw bytes, 256+ are pieces
 * with a leading-space marker that the decoder strips at the start of a window (Strip decoder).
 */
const pieces: Record<number, string> = { 256: '▁Once', 257: '▁upon', 258: '▁é', 259: '!' };
function decode(ids: readonly number[]): string {
  const bytes: number[] = [];
  for (const id of ids) {
    if (id < 256) bytes.push(id);
    else bytes.push(...new TextEncoder().encode(pieces[id]!.replace('▁', ' ')));
  }
  return new TextDecoder().decode(new Uint8Array(bytes)).replace(/^ /, '');
}

describe('TokenTextStream', () => {
  it('emits a multi-byte character only once all its byte pieces arrived', () => {
    const stream = new TokenTextStream(decode);
    const emoji = [...new TextEncoder().encode('😀')];
    const deltas = [256, 257, ...emoji, 259].map((id) => stream.push(id));
    expect(deltas).toEqual(['Once', ' upon', '', '', '', '😀', '!']);
  });

  it('concatenated deltas equal decoding everything at once, leading-space stripping included', () => {
    const ids = [256, 258, ...new TextEncoder().encode('ü'), 257, 259, 32, 65];
    const stream = new TokenTextStream(decode);
    const text = ids.map((id) => stream.push(id)).join('') + stream.flush();
    expect(text).toBe(decode(ids));
  });

  it('flush gives what a trailing partial character decodes to', () => {
    const stream = new TokenTextStream(decode);
    stream.push(256);
    expect(stream.push(0xf0)).toBe('');
    expect(stream.flush()).toBe('\uFFFD');
  });
});
