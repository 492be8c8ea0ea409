/**
 * Python `repr()` of the values that appear in transformers' messages (spec §1.2, §2.1), so that
 * kvscope's copies of those messages are character-identical and searchable (STYLE.md §10).
 */

/** `repr(str)`: single quotes unless the text has a single quote and no double quote. */
export function pythonStringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let body = '';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (char === '\\') body += '\\\\';
    else if (char === quote) body += `\\${quote}`;
    else if (char === '\n') body += '\\n';
    else if (char === '\r') body += '\\r';
    else if (char === '\t') body += '\\t';
    else if (code < 0x20 || code === 0x7f) body += `\\x${code.toString(16).padStart(2, '0')}`;
    else body += char;
  }
  return `${quote}${body}${quote}`;
}

/** `repr(list_of_str)`, e.g. `['text_config', 'decoder']`. */
export function pythonListRepr(items: readonly string[]): string {
  return `[${items.map(pythonStringRepr).join(', ')}]`;
}

/**
 * `repr(set_of_str)`, e.g. `{'sliding_attention'}`; `set()` when empty. Python orders a set of
 * strings by hash, which varies with PYTHONHASHSEED (spec §1.2), so kvscope sorts for determinism.
 */
export function pythonSetRepr(items: Iterable<string>): string {
  const unique = [...new Set(items)].sort();
  if (unique.length === 0) return 'set()';
  return `{${unique.map(pythonStringRepr).join(', ')}}`;
}

/** `str(number)` / f-string formatting of a Python int or float, for `… but got {nbits}`. */
export function pythonNumberRepr(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  return String(value);
}
