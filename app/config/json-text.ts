import { ConfigError } from '../errors.js';

/**
 * A strict JSON reader for config.json that reports where the text breaks (V8's `JSON.parse`
 * often names no position) and, like Python's `json` module that writes these files, accepts the
 * tokens `NaN`, `Infinity` and `-Infinity` (e.g. `"time_step_limit": [0.0, Infinity]`).
 *
 * It never recurses and never hands a long run of text to a backtracking regular expression: nesting
 * is an explicit stack and strings, numbers and whitespace are scanned in loops, so any text within
 * the limits below is read whatever its shape (an 8 MB string, 1000 levels of arrays), and text
 * beyond them is refused as "too large" or "too deep" instead of exhausting the call stack.
 */
export function parseJsonText(text: string, sourceName: string, limits: JsonLimits = DEFAULT_JSON_LIMITS): unknown {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (body.length > limits.maxLength) {
    throw new ConfigError(
      `${sourceName} is too large to be a model config: ${body.length} characters, more than the ${limits.maxLength} kvscope reads. ` +
      'A config.json is a few kilobytes; check that this is the right file (not a weights or tokenizer file renamed).',
    );
  }
  return new JsonReader(body, sourceName, limits.maxDepth).document();
}

export interface JsonLimits {
  /** characters of text (after a byte-order mark) */
  readonly maxLength: number;
  /** nested arrays and objects */
  readonly maxDepth: number;
}

/**
 * Python's json module (which transformers loads config.json with) gives up near 1000 levels of
 * nesting (RecursionError at the default recursion limit), so nothing deeper is a config transformers
 * can load. 64 Mi characters is far beyond any real config.json (a few kB) and still cheap to scan.
 */
export const DEFAULT_JSON_LIMITS: JsonLimits = { maxLength: 64 * 1024 * 1024, maxDepth: 1000 };

/**
 * How a non-finite number was written in the file (`NaN`, `Infinity`, `1e309`), by container and key,
 * so that a message can name the value as the file spells it: once read, `1e309` and `Infinity` are
 * the same number, and `JSON.stringify` prints both (and NaN) as `null`.
 */
const writtenForms = new WeakMap<object, Map<string, string>>();

export function writtenNonFinite(container: object, key: string | number): string | undefined {
  return writtenForms.get(container)?.get(String(key));
}

const LITERALS: readonly (readonly [string, unknown])[] = [
  ['true', true], ['false', false], ['null', null], ['NaN', NaN], ['Infinity', Infinity], ['-Infinity', -Infinity],
];

/** One open array or object on the explicit stack: the container and, for an object, the key being read. */
interface Frame {
  readonly container: unknown[] | Record<string, unknown>;
  readonly isArray: boolean;
  key: string;
}

/** Character codes the scanner compares against. */
const Char = {
  Tab: 0x09, Newline: 0x0a, Return: 0x0d, Space: 0x20, Quote: 0x22, Backslash: 0x5c,
  Zero: 0x30, Nine: 0x39, Minus: 0x2d, Plus: 0x2b, Dot: 0x2e, LowerE: 0x65, UpperE: 0x45,
} as const;

class JsonReader {
  private position = 0;

  constructor(private readonly text: string, private readonly sourceName: string, private readonly maxDepth: number) {}

  document(): unknown {
    const stack: Frame[] = [];
    let result: unknown;
    for (;;) {
      // Read one value; an array or object opens a frame and its elements come in the next turns.
      this.skipWhitespace();
      const char = this.text[this.position];
      let value: unknown;
      let written: string | undefined;
      if (char === undefined) this.fail('the text ends where a value was expected');
      if (char === '[' || char === '{') {
        if (stack.length >= this.maxDepth) {
          this.fail(`the values are nested too deep (more than ${this.maxDepth} levels of arrays and objects; Python's json module, which transformers uses, stops near the same depth)`);
        }
        this.position++;
        const isArray = char === '[';
        const frame: Frame = { container: isArray ? [] : {}, isArray, key: '' };
        this.skipWhitespace();
        const close = isArray ? ']' : '}';
        if (this.text[this.position] === close) {
          this.position++;
          value = frame.container;
        } else {
          if (!isArray) frame.key = this.propertyName();
          stack.push(frame);
          continue;
        }
      } else if (char === '"') {
        value = this.string();
      } else {
        [value, written] = this.scalar();
      }
      // Store the value, then close every frame that ends here.
      for (;;) {
        const frame = stack[stack.length - 1];
        if (frame === undefined) {
          result = value;
          break;
        }
        this.store(frame, value, written);
        written = undefined;
        this.skipWhitespace();
        const next = this.text[this.position];
        this.position++;
        if (frame.isArray ? next === ']' : next === '}') {
          stack.pop();
          value = frame.container;
          continue;
        }
        if (next !== ',') {
          this.fail(frame.isArray ? "expected ',' or ']' after an array element" : "expected ',' or '}' after a property's value", this.position - 1);
        }
        if (!frame.isArray) {
          this.skipWhitespace();
          frame.key = this.propertyName();
        }
        break;
      }
      if (stack.length === 0) break;
    }
    this.skipWhitespace();
    if (this.position < this.text.length) this.fail('unexpected text after the JSON value');
    return result;
  }

  private store(frame: Frame, value: unknown, written: string | undefined): void {
    let key: string;
    if (frame.isArray) {
      const array = frame.container as unknown[];
      key = String(array.length);
      array.push(value);
    } else {
      key = frame.key;
      // defineProperty, not assignment: a "__proto__" key must stay a plain property.
      Object.defineProperty(frame.container, key, { value, enumerable: true, writable: true, configurable: true });
    }
    if (written !== undefined) {
      let forms = writtenForms.get(frame.container);
      if (forms === undefined) writtenForms.set(frame.container, (forms = new Map()));
      forms.set(key, written);
    }
  }

  /** `"name"` then `:`, leaving the position at the value. */
  private propertyName(): string {
    if (this.text[this.position] !== '"') this.fail('expected a double-quoted property name');
    const key = this.string();
    this.skipWhitespace();
    if (this.text[this.position] !== ':') this.fail('expected \':\' after a property name');
    this.position++;
    return key;
  }

  /**
   * A string, checked character by character (JSON forbids raw control characters U+0000–U+001F, as
   * Python's strict json does) and decoded by `JSON.parse` on its exact slice.
   */
  private string(): string {
    const text = this.text;
    const start = this.position;
    let at = start + 1;
    let escaped = false;
    for (;;) {
      const code = text.charCodeAt(at);
      if (Number.isNaN(code) || code < Char.Space) this.fail('unterminated or malformed string', start);
      if (code === Char.Quote) break;
      if (code === Char.Backslash) {
        escaped = true;
        const kind = text[at + 1];
        if (kind === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(at + 2, at + 6))) this.fail('unterminated or malformed string', start);
          at += 6;
        } else if (kind !== undefined && '"\\/bfnrt'.includes(kind)) {
          at += 2;
        } else {
          this.fail('unterminated or malformed string', start);
        }
        continue;
      }
      at++;
    }
    this.position = at + 1;
    return escaped ? (JSON.parse(text.slice(start, at + 1)) as string) : text.slice(start + 1, at);
  }

  /** A literal or a number, with how a non-finite one was written. */
  private scalar(): [unknown, string | undefined] {
    for (const [literal, value] of LITERALS) {
      if (this.text.startsWith(literal, this.position)) {
        this.position += literal.length;
        return [value, typeof value === 'number' ? literal : undefined];
      }
    }
    const start = this.position;
    const end = this.numberEnd(start);
    // Never the character itself: a config.json linked to another file (/etc/shadow) must not echo one byte of it.
    if (end === start) this.fail('a value was expected (a string, number, object, array, true, false or null) but another character is there');
    this.position = end;
    const written = this.text.slice(start, end);
    const value = Number(written);
    // Python's json reads 1e309 as inf too; the message should still say 1e309.
    return [value, Number.isFinite(value) ? undefined : written];
  }

  /** The end of the JSON number at `start` (`-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`), or `start` when there is none. */
  private numberEnd(start: number): number {
    const text = this.text;
    let at = start;
    if (text.charCodeAt(at) === Char.Minus) at++;
    const integer = at;
    if (text.charCodeAt(at) === Char.Zero) at++;
    else at = this.digitsEnd(at);
    if (at === integer) return start;
    if (text.charCodeAt(at) === Char.Dot) {
      const fraction = this.digitsEnd(at + 1);
      if (fraction > at + 1) at = fraction;
      else return at;
    }
    const e = text.charCodeAt(at);
    if (e === Char.LowerE || e === Char.UpperE) {
      let exponent = at + 1;
      const sign = text.charCodeAt(exponent);
      if (sign === Char.Plus || sign === Char.Minus) exponent++;
      const digits = this.digitsEnd(exponent);
      if (digits > exponent) at = digits;
    }
    return at;
  }

  private digitsEnd(from: number): number {
    let at = from;
    for (let code = this.text.charCodeAt(at); code >= Char.Zero && code <= Char.Nine; code = this.text.charCodeAt(at)) at++;
    return at;
  }

  private skipWhitespace(): void {
    const text = this.text;
    let at = this.position;
    for (let code = text.charCodeAt(at); code === Char.Space || code === Char.Newline || code === Char.Return || code === Char.Tab; code = text.charCodeAt(at)) at++;
    this.position = at;
  }

  private fail(problem: string, at: number = this.position): never {
    let line = 1;
    let lineStart = 0;
    for (let index = this.text.indexOf('\n'); index !== -1 && index < at; index = this.text.indexOf('\n', index + 1)) {
      line++;
      lineStart = index + 1;
    }
    const column = at - lineStart + 1;
    throw new ConfigError(
      `${this.sourceName} is not valid JSON: ${problem} at line ${line}, column ${column} (position ${at}). ` +
      'transformers would fail to load it too; fix the file (a truncated download or a hand edit such as a trailing comma is the usual cause).',
    );
  }
}
