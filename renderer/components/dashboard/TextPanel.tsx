import { useEffect, useRef, type ReactNode } from 'react';
import type { RunBuffers } from '../../controller/live-buffers.js';
import type { TextSegment } from '../../metrics/text-stream.js';
import { useFrameTask } from '../../metrics/use-frame-task.js';

/**
 * The generated text as it streams, appended to the DOM on animation frames. Each `onText` delta
 * becomes a span; where the reference lane's top-1 token differs at one of the steps that produced
 * it, the span is highlighted and its tooltip names the steps and the reference's token ids. (Deltas
 * group the tokens of one batch: on a fast model a highlight covers the batch, on a slow one a token.)
 */
export function TextPanel({ buffers, referenceOn }: { buffers: RunBuffers; referenceOn: boolean }): ReactNode {
  /** the text; its scroller stays pinned to the bottom by CSS (column-reverse), so no layout is read here */
  const container = useRef<HTMLDivElement>(null);
  const count = useRef<HTMLSpanElement>(null);
  const appended = useRef(0);
  /** spans whose steps have not all reached the metrics yet */
  const pending = useRef<{ span: HTMLSpanElement; segment: TextSegment }[]>([]);

  useEffect(() => {
    appended.current = 0;
    pending.current = [];
    if (container.current !== null) container.current.textContent = '';
  }, [buffers]);

  useFrameTask(() => {
    const element = container.current;
    if (element === null) return false;
    const segments = buffers.text.segments;
    let worked = false;
    if (appended.current < segments.length) {
      const fragment = document.createDocumentFragment();
      for (let i = appended.current; i < segments.length; i++) {
        const span = document.createElement('span');
        span.textContent = segments[i]!.text;
        fragment.append(span);
        if (referenceOn) pending.current.push({ span, segment: segments[i]! });
      }
      element.append(fragment);
      appended.current = segments.length;
      if (count.current !== null) count.current.textContent = `${buffers.text.tokenCount} tokens`;
      worked = true;
    }
    if (pending.current.length > 0) {
      pending.current = pending.current.filter(({ span, segment }) => !markDisagreement(span, segment, buffers));
      worked = true;
    }
    return worked;
  }, [buffers, referenceOn]);

  return (
    <section className="text-panel" aria-labelledby="text-panel-title">
      <header>
        <h3 id="text-panel-title">Generated text</h3>
        <span className="muted" ref={count} data-testid="text-token-count" />
        {referenceOn && (
          <span className="legend-inline">
            <mark className="disagree">token</mark> the reference lane's top-1 differs · <span className="disagree-batch">batch</span><sup className="disagree-count">n</sup> n tokens of a streamed batch differ (hover for steps)
          </span>
        )}
      </header>
      <div className="generated-text-scroller" tabIndex={0} role="log" aria-live="off" aria-label="Generated text">
        <div ref={container} className="generated-text" data-testid="generated-text" />
      </div>
    </section>
  );
}

/** Marks the span when a step of its segment disagrees; returns true once all its steps are known. */
function markDisagreement(span: HTMLSpanElement, segment: TextSegment, buffers: RunBuffers): boolean {
  const steps = buffers.metrics.steps;
  const known = buffers.metrics.stepCount;
  const last = segment.firstStep + segment.tokenCount - 1;
  if (last >= known) return false;
  // steps are kept in a ring: logical row = step - (steps written - steps held)
  const offset = steps.total - steps.length;
  const differing: string[] = [];
  for (let step = segment.firstStep; step <= last; step++) {
    const row = step - offset;
    if (row < 0) continue;
    if (steps.get('top1Agrees', row) === 0) differing.push(`step ${step}: reference picks token ${steps.get('referenceTokenId', row)}, this run ${steps.get('tokenId', row)}`);
  }
  if (differing.length > 0) {
    // One token: its text is exactly the token's, so highlight it. Several (a batch from a fast
    // model): the text cannot be split per token, so underline the batch and count the steps.
    span.className = segment.tokenCount === 1 ? 'disagree' : 'disagree-batch';
    span.title = differing.join('\n');
    span.dataset['disagree'] = String(differing.length);
    // the count shows through CSS (::after), so the text's own content stays the generated text
  }
  return true;
}
