import { ConfigError } from '../errors.js';

/**
 * A strict JSON reader for config.json that reports where the text breaks (V8's `JSON.parse`
 * often names no position) and, like Python's `json` module that writes these files, accepts the
 * tokens `NaN`, `Infinity` and `-Infinity` (e.g. `"time_step_limit": [0.0, Infinity]`).
 * Strings are validated here and decoded by `JSON.parse` on their exact slice.
 */
export function parseJsonText(text: string, sourceName: string): unknown {
  const reader = new JsonReader(text.startsWith('\uFEFF') ? text.slice(1) : text, sourceName);
  return reader.document();
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// JSON forbids raw control characters (U+0000–U+001F) inside strings, as Python's strict json does.
// eslint-disable-next-line no-control-regex
const STRING = /"(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/y;
const WHITESPACE = /[ \t\n\r]*/y;
const LITERALS: readonly (readonly [string, unknown])[] = [
  ['true', true], ['false', false], ['null', null], ['NaN', NaN], ['Infinity', Infinity], ['-Infinity', -Infinity],
];

class JsonReader {
  private position = 0;

  constructor(private readonly text: string, private readonly sourceName: string) {}

  document(): unknown {
    const value = this.value();
    this.skipWhitespace();
    if (this.position < this.text.length) this.fail('unexpected text after the JSON value');
    return value;
  }

  private value(): unknown {
    this.skipWhitespace();
    const char = this.text[this.position];
    if (char === undefined) this.fail('the text ends where a value was expected');
    if (char === '{') return this.object();
    if (char === '[') return this.array();
    if (char === '"') return this.string();
    for (const [literal, value] of LITERALS) {
      if (this.text.startsWith(literal, this.position)) {
        this.position += literal.length;
        return value;
      }
    }
    return this.number();
  }

  private object(): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    this.position++;
    this.skipWhitespace();
    if (this.text[this.position] === '}') {
      this.position++;
      return result;
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text[this.position] !== '"') this.fail('expected a double-quoted property name');
      const key = this.string();
      this.skipWhitespace();
      if (this.text[this.position] !== ':') this.fail(`expected ':' after the property name "${key}"`);
      this.position++;
      // defineProperty, not assignment: a "__proto__" key must stay a plain property.
      Object.defineProperty(result, key, { value: this.value(), enumerable: true, writable: true, configurable: true });
      this.skipWhitespace();
      const next = this.text[this.position];
      this.position++;
      if (next === '}') return result;
      if (next !== ',') this.fail(`expected ',' or '}' after the value of "${key}"`, this.position - 1);
    }
  }

  private array(): unknown[] {
    const result: unknown[] = [];
    this.position++;
    this.skipWhitespace();
    if (this.text[this.position] === ']') {
      this.position++;
      return result;
    }
    for (;;) {
      result.push(this.value());
      this.skipWhitespace();
      const next = this.text[this.position];
      this.position++;
      if (next === ']') return result;
      if (next !== ',') this.fail("expected ',' or ']' after an array element", this.position - 1);
    }
  }

  private string(): string {
    STRING.lastIndex = this.position;
    const match = STRING.exec(this.text);
    if (match === null) this.fail('unterminated or malformed string');
    this.position += match[0].length;
    return JSON.parse(match[0]) as string;
  }

  private number(): number {
    NUMBER.lastIndex = this.position;
    const match = NUMBER.exec(this.text);
    if (match === null) this.fail(`unexpected character ${JSON.stringify(this.text[this.position])}`);
    this.position += match[0].length;
    return Number(match[0]);
  }

  private skipWhitespace(): void {
    WHITESPACE.lastIndex = this.position;
    WHITESPACE.exec(this.text);
    this.position = WHITESPACE.lastIndex;
  }

  private fail(problem: string, at: number = this.position): never {
    const before = this.text.slice(0, at);
    const line = before.split('\n').length;
    const column = at - before.lastIndexOf('\n');
    throw new ConfigError(
      `${this.sourceName} is not valid JSON: ${problem} at line ${line}, column ${column} (position ${at}). ` +
      'transformers would fail to load it too; fix the file (a truncated download or a hand edit such as a trailing comma is the usual cause).',
    );
  }
}
