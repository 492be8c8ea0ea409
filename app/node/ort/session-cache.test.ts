import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { storiesDir } from '../test-support/stories.js';
import { leaseDecoderSession, leasedSessionCount, releaseCachedSessions } from './session-cache.js';

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

  it('lets the idle session go when another graph is needed', async () => {
    const a = await leaseDecoderSession(fp32, { executionProvider: 'cpu' });
    await a.release();
    const b = await leaseDecoderSession(fp16, { executionProvider: 'cpu' });
    expect(b.session).not.toBe(a.session);
    await expect(a.session.run({})).rejects.toThrow(/was disposed/);
    await b.release();
  });
});
