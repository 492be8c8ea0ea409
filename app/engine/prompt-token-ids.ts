/**
 * A prompt given as token ids (RunSettings.promptTokenIds), for model folders without a tokenizer:
 * how the workbench reads them as typed, and the one check of them against the graph's vocabulary,
 * shared by the run (app/node/model/run-prompt.ts), the run panel and the fake engine.
 */

/** Why these ids cannot be fed, and what to do; null when they can. */
export interface PromptIdsProblem {
  readonly message: string;
  readonly fix: string;
}

/**
 * The vocabulary a prompt id must fall in: the graph's logits width when the header fixes it (the
 * embedding table has as many rows), else config's vocab_size; null when neither says.
 */
export function vocabularySize(logitsShape: readonly (number | string)[] | undefined, configVocabSize: number | null): number | null {
  const last = logitsShape?.[logitsShape.length - 1];
  return typeof last === 'number' && last > 0 ? last : configVocabSize;
}

/**
 * Ids outside the vocabulary (or not ids at all) fail inside onnxruntime's Gather: said here, with the
 * range. `what` names the ids in the message (`prompt ids` for a run, eval's `--text-ids FILE` ids).
 */
export function promptIdsProblem(ids: readonly number[], vocabSize: number | null, what = 'prompt ids'): PromptIdsProblem | null {
  const lastId = vocabSize === null ? null : vocabSize - 1;
  const fix = `Give at least one id, each from 0 to ${lastId ?? 'the vocabulary size - 1'}.`;
  if (ids.length === 0) return { message: `the ${what} are empty.`, fix };
  const outside = ids.filter((id) => !Number.isInteger(id) || id < 0 || (lastId !== null && id > lastId));
  if (outside.length === 0) return null;
  return { message: `${what} ${outside.slice(0, 5).join(', ')} are not token ids of this model (its logits have ${String(vocabSize)} entries).`, fix };
}

/** Who encoded the ids, for tokenizerIdsProblem's words: `the prompt` / `the text`, and how to give ids instead. */
export interface EncodedSubject {
  readonly subject: string;
  readonly idsInstead: string;
}

/**
 * The tokenizer's ids checked against the graph's vocabulary before any session runs: a tokenizer
 * that does not belong to the graph (test exports with a cut vocabulary) would otherwise end inside
 * onnxruntime's embedding lookup ("input index out of range"). One check for `run` and `eval`.
 */
export function tokenizerIdsProblem(ids: readonly number[], vocabSize: number | null, encoded: EncodedSubject): PromptIdsProblem | null {
  if (vocabSize === null) return null;
  const lastId = vocabSize - 1;
  const outside: number[] = [];
  for (const id of ids) {
    if (id > lastId) outside.push(id);
    if (outside.length === 5) break;
  }
  if (outside.length === 0) return null;
  return {
    message: `the tokenizer encodes ${encoded.subject} to ids the graph does not have (${outside.join(', ')}; the graph's logits have ${vocabSize} entries): ` +
      'the tokenizer and the graph do not belong together (test exports with a cut vocabulary are like this).',
    fix: `Give ${encoded.subject} as token ids from 0 to ${lastId} (${encoded.idsInstead}), or use the tokenizer exported with the graph.`,
  };
}

/**
 * Ids as a person types or pastes them: `1, 15043, 727`, `1 15043 727` or `[1, 15043, 727]` (a Python
 * or JSON list). Null when the text is not such a list (a word, a sign, a fraction).
 */
export function parsePromptIds(text: string): number[] | null {
  const inner = text.trim().replace(/^\[(.*)\]$/s, '$1').trim();
  if (inner === '') return [];
  const parts = inner.split(/\s*,\s*|\s+/);
  if (parts.some((part) => !/^\d{1,15}$/.test(part))) return null;
  return parts.map(Number);
}
