import { parseJsonText } from './config/json-text.js';

/**
 * Where `JSON.parse` failed, without what the text says there. V8's messages quote the text around
 * the fault (`Unexpected token 'r', "root:x:0:0:"... is not valid JSON`), which would echo a file's
 * content into an error: a linked or misplaced file is someone else's, and its first line may be a
 * secret. Only the position survives: ` at line L, column C (position N)`, ` (the text ends too soon)`,
 * or nothing.
 */
export function jsonSyntaxProblem(error: unknown, text: string): string {
  const message = error instanceof Error ? error.message : '';
  if (/Unexpected end of JSON input/.test(message)) return ' (the text ends too soon: a truncated download or copy?)';
  const position = /at position (\d+)/.exec(message);
  // V8 names no position for some faults (an unexpected first token): kvscope's own reader finds it.
  const at = position !== null ? Number(position[1]) : positionFromReader(text);
  if (at === null) return '';
  let line = 1;
  let lineStart = 0;
  for (let index = text.indexOf('\n'); index !== -1 && index < at; index = text.indexOf('\n', index + 1)) {
    line++;
    lineStart = index + 1;
  }
  return ` at line ${line}, column ${at - lineStart + 1} (position ${at})`;
}

function positionFromReader(text: string): number | null {
  try {
    parseJsonText(text, '');
  } catch (error) {
    const found = /\(position (\d+)\)/.exec((error as Error).message);
    if (found !== null) return Number(found[1]);
  }
  return null;
}
