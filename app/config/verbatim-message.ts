/**
 * A message that starts with the exact text transformers (or its backend) raises, so users can
 * search for it, followed by kvscope's explanation on the next line (STYLE.md §10).
 */
export function withExplanation(verbatim: string, explanation: string): string {
  return `${verbatim}\n${explanation}`;
}
