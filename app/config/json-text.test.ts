import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.js';
import { parseJsonText } from './json-text.js';

function failure(text: string): ConfigError {
  try {
    parseJsonText(text, 'model/config.json');
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('parseJsonText', () => {
  it('reads objects, arrays, numbers, strings with escapes and literals like JSON.parse', () => {
    const text = '{"a": [1, -2.5e3, "x\\u00e9\\n"], "b": {"c": null, "d": true, "e": false}, "f": ""}';
    expect(parseJsonText(text, 'c.json')).toEqual(JSON.parse(text));
  });

  it("accepts Python json's NaN, Infinity and -Infinity", () => {
    const value = parseJsonText('{"time_step_limit": [0.0, Infinity], "x": -Infinity, "y": NaN}', 'c.json') as Record<string, unknown>;
    expect(value['time_step_limit']).toEqual([0, Infinity]);
    expect(value['x']).toBe(-Infinity);
    expect(Number.isNaN(value['y'])).toBe(true);
  });

  it('names the line, column and position of a missing comma', () => {
    const error = failure('{\n  "a": 1\n  "b": 2}');
    expect(error.message).toContain('model/config.json is not valid JSON');
    expect(error.message).toContain(`expected ',' or '}' after the value of "a" at line 3, column 3 (position 13)`);
  });

  it('locates a trailing comma, which JSON.parse reports without the property', () => {
    expect(failure('{"a": 1,}').message).toContain('expected a double-quoted property name at line 1, column 9 (position 8)');
  });

  it('locates a value that is missing, where V8 names no position', () => {
    expect(failure('{"a": }').message).toContain('unexpected character "}" at line 1, column 7 (position 6)');
  });

  it('reports an empty or truncated file at its end', () => {
    expect(failure('').message).toContain('the text ends where a value was expected at line 1, column 1 (position 0)');
    expect(failure('[1, 2').message).toContain("expected ',' or ']' after an array element at line 1, column 6 (position 5)");
  });

  it('rejects text after the value and raw control characters in strings', () => {
    expect(failure('{} x').message).toContain('unexpected text after the JSON value at line 1, column 4 (position 3)');
    expect(failure('{"a": "x\ty"}').message).toContain('unterminated or malformed string at line 1, column 7');
  });

  it('keeps a "__proto__" key as an ordinary property', () => {
    const value = parseJsonText('{"__proto__": {"polluted": 1}}', 'c.json') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect((value as { polluted?: number }).polluted).toBeUndefined();
  });

  it('skips a UTF-8 byte-order mark', () => {
    expect(parseJsonText('\uFEFF{"a": 1}', 'c.json')).toEqual({ a: 1 });
  });
});
