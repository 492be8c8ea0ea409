import { useEffect, useRef, type ReactNode } from 'react';
import type { RunBuffers } from '../../controller/live-buffers.js';
import { useFrameTask } from '../../metrics/use-frame-task.js';

interface TextPanelProps {
  readonly buffers: RunBuffers;
  readonly referenceOn: boolean;
  /** the run has ended (or is a saved one): the text's tail, held back by the detokenizer, can be shown */
  readonly finished: boolean;
  /** the prompt, when it was given as token ids (RunSettings.promptTokenIds): shown as the ids it was */
  readonly promptIds?: readonly number[] | undefined;
}

/**
 * The generated text, one span per token, appended to the DOM on animation frames. Each step's
 * metrics carry the text its token completed (StepMetrics.text), so a token whose step the reference
 * lane disagrees with is marked on its own, at any speed and in saved runs alike; its tooltip names
 * the step and both tokens. A record from before per-token text shows the text whole, with the
 * differing steps listed.
 */
export function TextPanel({ buffers, referenceOn, finished, promptIds }: TextPanelProps): ReactNode {
  /** the text; its scroller stays pinned to the bottom by CSS (column-reverse), so no layout is read here */
  const container = useRef<HTMLDivElement>(null);
  const count = useRef<HTMLSpanElement>(null);
  const differs = useRef<HTMLParagraphElement>(null);
  const state = useRef<TextState>(freshState());

  useEffect(() => {
    state.current = freshState();
    if (container.current !== null) container.current.textContent = '';
  }, [buffers]);

  useFrameTask(() => {
    const element = container.current;
    if (element === null) return false;
    const metrics = buffers.metrics;
    const s = state.current;
    let worked = false;
    if (metrics.hasStepText) {
      const known = metrics.stepCount;
      if (s.step < known) {
        const offset = metrics.steps.total - metrics.steps.length;
        for (; s.step < known; s.step++) {
          const text = metrics.stepTexts[s.step] ?? '';
          const span = document.createElement('span');
          span.textContent = text;
          span.dataset['step'] = String(s.step);
          const row = s.step - offset;
          if (referenceOn && row >= 0 && metrics.steps.get('top1Agrees', row) === 0) {
            span.className = 'disagree';
            span.title = `step ${s.step}: the reference picks token ${metrics.steps.get('referenceTokenId', row)}, this run token ${metrics.steps.get('tokenId', row)}`;
            s.marks++;
          }
          appendToken(element, s, span, text);
          s.text += text;
        }
        worked = true;
      }
      // The detokenizer holds back a partial character until the end; it comes with the whole text
      // (joined only then: joining 10,000 segments on every frame of a stream cost a millisecond each)
      const full = finished && !s.tail && s.step >= known ? buffers.text.text() : '';
      if (full.length > s.text.length && full.startsWith(s.text)) {
        const span = document.createElement('span');
        span.textContent = full.slice(s.text.length);
        appendToken(element, s, span, span.textContent);
        s.tail = true;
        worked = true;
      }
    } else if (finished && s.segments < buffers.text.segments.length) {
      // a record without per-token text: the text as it came, whole (while a run streams, its
      // text may come a batch before its steps: only a finished run without step text gets here)
      for (; s.segments < buffers.text.segments.length; s.segments++) {
        const span = document.createElement('span');
        span.textContent = buffers.text.segments[s.segments]!.text;
        appendToken(element, s, span, span.textContent);
      }
      worked = true;
    }
    if (worked) {
      if (count.current !== null) count.current.textContent = `${Math.max(metrics.stepCount, buffers.text.tokenCount)} tokens`;
      if (differs.current !== null) differs.current.textContent = differenceSummary(buffers, referenceOn, metrics.hasStepText ? s.marks : null);
    }
    return worked;
  }, [buffers, referenceOn, finished]);

  return (
    <section className="text-panel" aria-labelledby="text-panel-title">
      <header>
        <h3 id="text-panel-title">Generated text</h3>
        <span className="muted" ref={count} data-testid="text-token-count" />
        {referenceOn && (
          <span className="legend-inline">
            <mark className="disagree">token</mark> the reference lane's top-1 token differs at this step (hover for both tokens)
          </span>
        )}
      </header>
      {promptIds !== undefined && (
        <p className="muted text-prompt-ids" data-testid="text-prompt-ids">Prompt (token ids): <code>{promptIds.join(' ')}</code></p>
      )}
      <p className="muted text-differs" ref={differs} data-testid="text-differs" />
      <div className="generated-text-scroller" tabIndex={0} role="log" aria-live="off" aria-label="Generated text">
        <div ref={container} className="generated-text" data-testid="generated-text" />
      </div>
    </section>
  );
}

interface TextState {
  step: number;
  text: string;
  tail: boolean;
  segments: number;
  marks: number;
  /** the block the next token goes into, and how many tokens it holds */
  chunk: HTMLDivElement | null;
  chunkTokens: number;
}

function freshState(): TextState {
  return { step: 0, text: '', tail: false, segments: 0, marks: 0, chunk: null, chunkTokens: 0 };
}

/**
 * Tokens a text block takes before the next token that starts a line or a word opens a new one.
 * The text is a column of blocks, each laid out and painted on its own (`content-visibility: auto`):
 * a token appended while 10,000 stream in relays and repaints its block, not the whole text
 * (one block of 10,000 spans took 20 ms of layout and 16 ms of paint per frame in Chromium).
 */
const TOKENS_PER_BLOCK = 400;

function appendToken(element: HTMLElement, state: TextState, span: HTMLSpanElement, text: string): void {
  const boundary = state.chunkTokens >= TOKENS_PER_BLOCK && (/^\s/.test(text) || state.text.endsWith('\n'));
  if (state.chunk === null || boundary) {
    state.chunk = document.createElement('div');
    state.chunk.className = 'text-block';
    state.chunkTokens = 0;
    element.append(state.chunk);
  }
  state.chunk.append(span);
  state.chunkTokens++;
}

/** How many steps differ from the reference, and where when the text cannot show it token by token. */
function differenceSummary(buffers: RunBuffers, referenceOn: boolean, marked: number | null): string {
  if (!referenceOn) return '';
  const reference = buffers.metrics.reference();
  if (reference === null) return '';
  const total = Math.round((1 - reference.top1Agreement) * reference.steps);
  if (marked !== null) return total === 0 ? 'The reference lane agrees at every step.' : `${total} of ${reference.steps} steps differ from the reference lane (marked).`;
  const steps: number[] = [];
  const rows = buffers.metrics.steps.length;
  for (let i = 0; i < rows && steps.length < 40; i++) if (buffers.metrics.steps.get('top1Agrees', i) === 0) steps.push(buffers.metrics.steps.get('step', i));
  return total === 0
    ? 'The reference lane agrees at every step.'
    : `${total} of ${reference.steps} steps differ from the reference lane: steps ${steps.join(', ')}${total > steps.length ? ', …' : ''} (this record has no per-token text to mark).`;
}
