/** 200 KB of short words: about 100k stories260k tokens, far more than any machine can prefill at once. */
export const PROMPT_200_KB = 'a b '.repeat(50_000);
