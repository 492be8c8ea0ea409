import { describe, expect, it } from 'vitest';
import type { MetricsMessage, TextMessage } from './messages.js';
import { StreamBatcher, type BatchClock } from './stream-batcher.js';
import { sampleStep } from './test-support/sample-messages.js';

/** A clock the test advances by hand; scheduled callbacks run when their time comes. */
function fakeClock(): BatchClock & { advance(ms: number): void; pending(): number } {
  let now = 0;
  let timers: { at: number; callback: () => void }[] = [];
  return {
    now: () => now,
    schedule(callback, delayMs) {
      const timer = { at: now + delayMs, callback };
      timers.push(timer);
      return () => { timers = timers.filter((t) => t !== timer); };
    },
    advance(ms) {
      now += ms;
      const due = timers.filter((t) => t.at <= now);
      timers = timers.filter((t) => t.at > now);
      for (const t of due) t.callback();
    },
    pending: () => timers.length,
  };
}

function collect(): { posted: (TextMessage | MetricsMessage)[]; post: (m: TextMessage | MetricsMessage) => void } {
  const posted: (TextMessage | MetricsMessage)[] = [];
  return { posted, post: (m) => void posted.push(m) };
}

describe('StreamBatcher', () => {
  it('posts the first step at once, then at most one batch per interval, text before metrics', () => {
    const clock = fakeClock();
    const { posted, post } = collect();
    const batcher = new StreamBatcher(7, post, clock, { intervalMs: 80, maxSteps: 1000 });
    batcher.addText('Once', 403);
    expect(posted).toEqual([{ type: 'text', id: 7, delta: 'Once', tokenIds: [403] }]);
    batcher.addStep(sampleStep(0));
    for (let i = 1; i <= 5; i++) {
      clock.advance(10);
      batcher.addText(` w${i}`, 400 + i);
      batcher.addStep(sampleStep(i));
    }
    // 50 ms in: the prefill step waits with the others for the timer.
    expect(posted).toHaveLength(1);
    clock.advance(30);
    expect(posted.map((m) => m.type)).toEqual(['text', 'text', 'metrics']);
    expect(posted[1]).toEqual({ type: 'text', id: 7, delta: ' w1 w2 w3 w4 w5', tokenIds: [401, 402, 403, 404, 405] });
    expect((posted[2] as MetricsMessage).steps.map((s) => s.step)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(clock.pending()).toBe(0);
  });

  it('posts a step of a slow model as soon as it arrives', () => {
    const clock = fakeClock();
    const { posted, post } = collect();
    const batcher = new StreamBatcher(1, post, clock, { intervalMs: 80, maxSteps: 1000 });
    for (let i = 0; i < 3; i++) {
      batcher.addStep(sampleStep(i));
      expect(posted).toHaveLength(i + 1);
      clock.advance(500);
    }
  });

  it('posts early when maxSteps are waiting', () => {
    const clock = fakeClock();
    const { posted, post } = collect();
    const batcher = new StreamBatcher(1, post, clock, { intervalMs: 80, maxSteps: 4 });
    for (let i = 0; i < 9; i++) batcher.addStep(sampleStep(i));
    expect(posted.map((m) => (m as MetricsMessage).steps.length)).toEqual([1, 4, 4]);
  });

  it('flushes what waits on demand, and drops it on dispose', () => {
    const clock = fakeClock();
    const { posted, post } = collect();
    const batcher = new StreamBatcher(1, post, clock, { intervalMs: 80, maxSteps: 1000 });
    batcher.addStep(sampleStep(0));
    batcher.addStep(sampleStep(1));
    batcher.flush();
    expect(posted).toHaveLength(2);
    batcher.flush();
    expect(posted).toHaveLength(2);
    batcher.addStep(sampleStep(2));
    batcher.dispose();
    clock.advance(1000);
    batcher.flush();
    expect(posted).toHaveLength(2);
    expect(clock.pending()).toBe(0);
  });
});
