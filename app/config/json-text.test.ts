import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.js';
import { DEFAULT_JSON_LIMITS, parseJsonText, writtenNonFinite } from './json-text.js';

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
    expect(error.message).toContain(`expected ',' or '}' after a property's value at line 3, column 3 (position 13)`);
  });

  it('locates a trailing comma, which JSON.parse reports without the property', () => {
    expect(failure('{"a": 1,}').message).toContain('expected a double-quoted property name at line 1, column 9 (position 8)');
  });

  it('locates a value that is missing, where V8 names no position', () => {
    expect(failure('{"a": }').message).toContain('a value was expected (a string, number, object, array, true, false or null) but another character is there at line 1, column 7 (position 6)');
  });

  it('never quotes the file: a config linked to /etc/shadow is located, not echoed', () => {
    const shadow = 'root:$6$saltsalt$hash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n';
    const message = failure(shadow).message;
    expect(message).toMatch(/at line 1, column 1 \(position 0\)/);
    // not one byte of it: no character of the file appears quoted, and no run of its text at all
    expect(message).not.toMatch(/"r"|'r'|root|daemon|\$6\$/);
    for (const text of ['{"secret-key" 1}', '{"secret-key": 1 "x": 2}']) expect(failure(text).message).not.toContain('secret-key');
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

describe('parseJsonText at the limits (issue 9, failure 6)', () => {
  it('reads an 8 MB string, which the old string pattern overflowed the stack on', () => {
    const long = 'x'.repeat(8 * 1024 * 1024);
    const value = parseJsonText(`{"model_type": "llama", "note": "${long}"}`, 'c.json') as Record<string, string>;
    expect(value['note']).toHaveLength(long.length);
    const escaped = parseJsonText(`["${'\\n'.repeat(1 << 20)}"]`, 'c.json') as string[];
    expect(escaped[0]).toBe('\n'.repeat(1 << 20));
  });

  it('reads long runs of digits and whitespace without a backtracking pattern', () => {
    expect(parseJsonText(`${' '.repeat(1 << 22)}[1${'0'.repeat(1 << 20)}e-1048576]`, 'c.json')).toEqual([1]);
  });

  it('reads nesting up to its depth limit without recursion, and refuses deeper as "too deep"', () => {
    const depth = DEFAULT_JSON_LIMITS.maxDepth;
    const deep = parseJsonText(`${'['.repeat(depth)}1${']'.repeat(depth)}`, 'c.json');
    let level = 0;
    for (let value: unknown = deep; Array.isArray(value); value = value[0]) level++;
    expect(level).toBe(depth);
    const objects = parseJsonText(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`, 'c.json');
    expect(objects).toBeTypeOf('object');
    const tooDeep = failure(`${'['.repeat(200_000)}${']'.repeat(200_000)}`);
    expect(tooDeep.message).toMatch(/model\/config\.json is not valid JSON: the values are nested too deep \(more than 1000 levels/);
    expect(tooDeep.message).toContain(`position ${depth}`);
  });

  it('refuses text beyond its size limit as "too large", before scanning it', () => {
    expect(() => parseJsonText('[1, 2, 3]', 'big.json', { maxLength: 8, maxDepth: 10 })).toThrow(/big\.json is too large to be a model config: 9 characters, more than the 8/);
    expect(parseJsonText('[1, 2]', 'ok.json', { maxLength: 8, maxDepth: 10 })).toEqual([1, 2]);
  });

  it('remembers how a non-finite number was written, by container and key', () => {
    const value = parseJsonText('{"a": 1e309, "b": NaN, "c": [-Infinity, 2, -1e400], "d": 1.5}', 'c.json') as { a: number; c: number[] };
    expect(value.a).toBe(Infinity);
    expect(writtenNonFinite(value, 'a')).toBe('1e309');
    expect(writtenNonFinite(value, 'b')).toBe('NaN');
    expect(writtenNonFinite(value, 'd')).toBeUndefined();
    expect(writtenNonFinite(value.c, 0)).toBe('-Infinity');
    expect(writtenNonFinite(value.c, 1)).toBeUndefined();
    expect(writtenNonFinite(value.c, 2)).toBe('-1e400');
  });

  it('agrees with JSON.parse on a sample of well-formed documents', () => {
    const samples = ['0', '-0', '1.5e+10', '"a\\"b\\\\c\\/\\b\\f\\r\\t\\u00e9"', '[[], {}, [{}], {"a": []}]', '{"a": {"b": {"c": [1, [2, [3]]]}}}', ' \n\t[ 1 , 2 ]\r\n'];
    for (const text of samples) expect(parseJsonText(text, 'c.json'), text).toEqual(JSON.parse(text));
  });
});
