import { jsonSyntaxProblem } from '../json-syntax.js';
import { makeRecordError, RECORD_KINDS, type MakeRecordError, type RecordKind } from './record-header.js';

/**
 * A record file's text as JSON, refused in words a person can act on when it is empty, not JSON or
 * cut short (a crash, a sync tool or an interrupted copy), for records of every kind.
 */
export function parseRecordDocument(kind: RecordKind, text: string, sourceName: string, fail: MakeRecordError = makeRecordError): unknown {
  const { noun, article } = RECORD_KINDS[kind];
  if (text.trim().length === 0) throw fail(`${sourceName} is empty; it is not ${article} ${noun} (an interrupted copy?).`);
  try {
    return JSON.parse(text);
  } catch (error) {
    const cut = /[}\]]\s*$/.test(text) ? '' : ' The file looks cut short (an interrupted write or copy).';
    // Only where it breaks: V8's message quotes the text, which may be another program's file.
    throw fail(`${sourceName} is not valid JSON${jsonSyntaxProblem(error, text)}.${cut}`);
  }
}
