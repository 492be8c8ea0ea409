/**
 * onnxruntime's error text, made readable: no stack lines, no `/onnxruntime_src/…cc:136 onnxruntime::…
 * <lambda()> … was false.` source prefix, no ANSI colour codes; what remains is what ORT says went wrong.
 */
export function readableOrtMessage(error: unknown): string {
  const raw = error instanceof Error ? error.message : String(error);
  const text = raw
    // eslint-disable-next-line no-control-regex
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .filter((line) => !/^\s+at\s/.test(line))
    .join(' ')
    .replace(/\/onnxruntime_src\/\S+:\d+\s+/g, '')
    .replace(/^.*?\bwas false\.\s*/, '')
    .replace(/\s+/g, ' ')
    .trim();
  return text === '' ? 'onnxruntime gave no message' : text;
}
