import { describe, expect, it } from 'vitest';
import { decodeJsonNumber, stringifyJson } from './json-numbers.js';

describe('json-numbers', () => {
  it('writes non-finite numbers as strings that every JSON reader accepts and decodes them back', () => {
    const text = stringifyJson({ snrDb: Infinity, low: -Infinity, kl: NaN, ok: 1.5, label: 'Infinity' });
    expect(text).toBe('{"snrDb":"Infinity","low":"-Infinity","kl":"NaN","ok":1.5,"label":"Infinity"}');
    const back = JSON.parse(text) as Record<string, unknown>;
    expect(decodeJsonNumber(back['snrDb'])).toBe(Infinity);
    expect(decodeJsonNumber(back['low'])).toBe(-Infinity);
    expect(decodeJsonNumber(back['kl'])).toBeNaN();
    expect(decodeJsonNumber(back['ok'])).toBe(1.5);
    expect(decodeJsonNumber('inf')).toBeUndefined();
    expect(decodeJsonNumber('constructor')).toBeUndefined();
    expect(decodeJsonNumber(null)).toBeUndefined();
  });
});
