import type { z } from 'zod';
import type { Diagnostic } from '../preflight/diagnostic.js';
import type { Read } from './field-readers.js';
import { arraySchema, choiceSchema, countSchema, objectSchema, schemaReader, stringSchema } from './protocol-schema.js';

/**
 * A preflight `Diagnostic` or an engine `ModelDiagnostic` as it crosses a boundary. Both share this
 * shape; `code` stays a string because each producer owns its own list of codes, and a reader that
 * refused a code it does not know would hide the producer's message behind a protocol error.
 */
export type DiagnosticPayload = Omit<Diagnostic, 'code'> & { readonly code: string };

export const diagnosticSchema: z.ZodType<DiagnosticPayload> = objectSchema({
  code: stringSchema,
  severity: choiceSchema(['error', 'warning', 'info']),
  origin: choiceSchema(['transformers', 'backend', 'kvscope']),
  message: stringSchema,
  layers: arraySchema(countSchema),
  fix: stringSchema.optional(),
});

export const readDiagnostic: Read<DiagnosticPayload> = schemaReader(diagnosticSchema);
