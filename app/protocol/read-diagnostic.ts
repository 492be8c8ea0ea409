import type { Diagnostic } from '../preflight/diagnostic.js';
import { arrayReader, choiceReader, readCount, readObject, readString, withOptional, type Read } from './field-readers.js';

/**
 * A preflight `Diagnostic` or an engine `ModelDiagnostic` as it crosses a boundary. Both share this
 * shape; `code` stays a string because each producer owns its own list of codes, and a reader that
 * refused a code it does not know would hide the producer's message behind a protocol error.
 */
export type DiagnosticPayload = Omit<Diagnostic, 'code'> & { readonly code: string };

export const readDiagnostic: Read<DiagnosticPayload> = (value, path) => {
  const fields = readObject(value, path);
  return {
    code: fields.get('code', readString),
    severity: fields.get('severity', choiceReader(['error', 'warning', 'info'] as const)),
    origin: fields.get('origin', choiceReader(['transformers', 'backend', 'kvscope'] as const)),
    message: fields.get('message', readString),
    layers: fields.get('layers', arrayReader(readCount)),
    ...withOptional('fix', fields.optional('fix', readString)),
  };
};
