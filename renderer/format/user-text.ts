/**
 * kvscope's messages cite sections of its own reference documents ("(spec §1.3)") for the people
 * who maintain it; the person at the workbench does not have those documents. This drops such
 * citations from text before it is shown, keeping whatever else the parentheses said
 * ("(spec §3.2, inferred from hqq's code)" becomes "(inferred from hqq's code)").
 */
const CITATION = String.raw`spec §\d+(?:\.\d+)*(?:,? (?:step|consequence) \d+)?(?:, §\d+(?:\.\d+)*)*`;
const ALONE = new RegExp(String.raw`\s*\(${CITATION}\)`, 'g');
const LEADING = new RegExp(String.raw`\(${CITATION}[,;]\s*`, 'g');
const TRAILING = new RegExp(String.raw`[,;]\s*${CITATION}(?=\))`, 'g');
const INLINE = new RegExp(String.raw`\s*\b${CITATION}\b`, 'g');

export function withoutDocumentReferences(text: string): string {
  return text.replace(ALONE, '').replace(LEADING, '(').replace(TRAILING, '').replace(INLINE, '').replace(/ +([.,;])/g, '$1');
}

/**
 * A library's message as a sentence: onnxruntime's ("… No supported adapters") ends without a
 * full stop, and the panel writes "How to enable it: …" right after it.
 */
export function asSentence(text: string): string {
  const trimmed = text.trimEnd();
  return trimmed === '' || /[.!?:)]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}
