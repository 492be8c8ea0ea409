/**
 * The one filler all these tasks share. Mohtashami & Jaggi's passkey test (epfml/landmark-attention,
 * llama/run_test.py, `garbage`; LongLoRA's passkey_retrivial.py copies it) and RULER's "repeat"
 * haystack (NVIDIA/RULER scripts/data/synthetic/niah.py, `type_haystack == 'repeat'`; the noise of
 * variable_tracking.py) are the same five sentences. Nothing is downloaded: RULER's other haystack,
 * Paul Graham's essays, is not used.
 */
export const FILLER = 'The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.';

/** The longest single sentence of the filler, in characters: the tolerance of a character-cut filler. */
export const FILLER_SENTENCE_CHARS = Math.max(...FILLER.split(/(?<=\.) /).map((sentence) => sentence.length + 1));
