import type { DecoderIo } from '../engine/decoder-io.js';
import type { GraphHeader } from '../onnx/graph-header.js';
import { logitsHeadOfHeader } from '../onnx/rewrite/logits-rows.js';
import type { ModelLayout } from './model-layout.js';

/**
 * How a layout's graph comes to compute only the logits rows a step reads (issue 23, point 4):
 * - `input`: it takes num_logits_to_keep itself (StepInputs feeds it);
 * - `derived`: it does not, but its LM head was found in its header, so a run derives a graph that
 *   takes it (keepLogitsRows, cached beside the in-graph rewrites: app/node/onnx/in-graph-model.ts);
 * - `every-row`: neither; the prefill computes every prompt row's logits, and `reason` says why.
 * Decided from the header alone, so the prefill guard counts the rows the run will compute before
 * any weight is read.
 */
export type LogitsRowsSupport =
  | { readonly kind: 'input' }
  | { readonly kind: 'derived' }
  | { readonly kind: 'every-row'; readonly reason: string };

export function logitsRowsSupport(graph: GraphHeader, io: DecoderIo | null, layout: ModelLayout): LogitsRowsSupport {
  if (io === null) return { kind: 'every-row', reason: 'the graph\'s inputs and outputs were not read' };
  if (io.logitsToKeep !== null) return { kind: 'input' };
  // The pair's prefill graph is the one that computes the prompt's rows; only its decode graph is replaced by a run.
  if (layout.prefillGraph !== null) return { kind: 'every-row', reason: `the ${layout.label} runs its prefill on a second graph, which is not derived` };
  const found = logitsHeadOfHeader(graph, io.logits);
  if ('hasInput' in found) return { kind: 'input' };
  if ('reason' in found) return { kind: 'every-row', reason: `the LM head before \`${io.logits}\` was not found (${found.reason})` };
  return { kind: 'derived' };
}
