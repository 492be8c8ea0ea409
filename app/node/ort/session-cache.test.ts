import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { storiesDir } from '../test-support/stories.js';
import { IDLE_BUDGET_BYTES, idleGroupCount, leaseDecoderSession, leasedSessionCount, releaseCachedSessions } from './session-cache.js';

describe('leaseDecoderSession', () => {
  afterAll(() => releaseCachedSessions());
  const fp32 = join(storiesDir(), 'onnx', 'model.onnx');
  const fp16 = join(storiesDir(), 'onnx', 'model_fp16.onnx');

  it('hands the released session to the next run of the same graph, and never lends a busy one', async () => {
    const first = await leaseDecoderSession(fp32, { executionProvider: 'cpu' });
    const concurrent = await leaseDecoderSession(fp32, { executionProvider: 'cpu' });
    expect(concurrent.session).not.toBe(first.session);
    expect(leasedSessionCount()).toBe(2);
    await first.release();
    await concurrent.release();
    expect(leasedSessionCount()).toBe(0);
    const again = await leaseDecoderSession(fp32, { executionProvider: 'cpu' });
    expect(again.session).toBe(first.session);
    await again.release();
    await again.release();
  });

  it('keeps recent small graphs warm side by side: back to the first, its session is reused', async () => {
    await releaseCachedSessions();
    const a = await leaseDecoderSession(fp32, { executionProvider: 'cpu' });
    expect(a.reused).toBe(false);
    await a.release();
    const b = await leaseDecoderSession(fp16, { executionProvider: 'cpu' });
    expect(b.reused).toBe(false);
    await b.release();
    expect(idleGroupCount()).toBe(2);
    const again = await leaseDecoderSession(fp32, { executionProvider: 'cpu' });
    expect(again.reused).toBe(true);
    expect(again.session).toBe(a.session);
    await again.release();
    await releaseCachedSessions();
    expect(idleGroupCount()).toBe(0);
    await expect(a.session.run({})).rejects.toThrow(/was disposed/);
  });

  it('lets every idle session go before creating one that would not fit beside them (a large model is resident once)', async () => {
    await releaseCachedSessions();
    const a = await leaseDecoderSession(fp32, { executionProvider: 'cpu' });
    await a.release();
    const large = await leaseDecoderSession(fp16, { executionProvider: 'cpu', residentBytes: IDLE_BUDGET_BYTES + 1 });
    await expect(a.session.run({})).rejects.toThrow(/was disposed/);
    expect(idleGroupCount()).toBe(0);
    await large.release();
    // kept alone although over the budget: the next run on it skips loading it
    expect(idleGroupCount()).toBe(1);
    const next = await leaseDecoderSession(fp16, { executionProvider: 'cpu', residentBytes: IDLE_BUDGET_BYTES + 1 });
    expect(next.reused).toBe(true);
    await next.release();
    // and let go when another graph comes
    const other = await leaseDecoderSession(fp32, { executionProvider: 'cpu' });
    await expect(large.session.run({})).rejects.toThrow(/was disposed/);
    await other.release();
  });
});
