/** One `onText` delta: the text and the steps (generated tokens) that completed it. */
export interface TextSegment {
  readonly text: string;
  /** step of the first token (generated token i comes from step i; step 0 = prefill) */
  readonly firstStep: number;
  readonly tokenCount: number;
}

/**
 * The generated text as it streams, kept outside React like the metrics: `append` is called by the
 * API's `onText` handler, and the text view appends the new segments to the DOM on animation frames.
 */
export class TextStream {
  readonly segments: TextSegment[] = [];
  tokenCount = 0;
  version = 0;

  append(delta: string, tokenIds: readonly number[]): void {
    this.segments.push({ text: delta, firstStep: this.tokenCount, tokenCount: tokenIds.length });
    this.tokenCount += tokenIds.length;
    this.version++;
  }

  text(): string {
    return this.segments.map((segment) => segment.text).join('');
  }
}
