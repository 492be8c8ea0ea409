import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { formatEvalReport } from '../../lab/eval-report.js';
import { createEvalRecord, parseEvalRecord, serializeEvalRecord } from '../../lab/eval-record.js';
import { hasShared } from '../golden.js';
import { setSweepJobs } from '../ort/ort-decoder-session.js';
import { leasedSessionCount, releaseCachedSessions } from '../ort/session-cache.js';
import { runEval } from './run-eval.js';
import { storiesEvalSettings, tempReferenceStore } from './test-support/eval-settings.js';

/**
 * The eval record says how its session computed (issue 23): which graph ran for the logits rows, and
 * whether ORT prepacked the weights; a sweep's job does not (ort-decoder-session.ts SessionSharing),
 * which moves the figures' last digits, so its record and its text report say so.
 */
afterEach(() => setSweepJobs(undefined));
afterAll(async () => {
  expect(leasedSessionCount()).toBe(0);
  await releaseCachedSessions();
});

const describeBytes = (bytes: number): string => `${bytes} B`;
const NOTE = 'weights not prepacked (sweep job)';

describe.skipIf(!hasShared())('the eval record\'s session', () => {
  it('a sweep job\'s evaluation: the derived graph, weights not prepacked, said in the record and the report; `kvscope eval`\'s prepacked, no line', async () => {
    const settings = storiesEvalSettings({}, 1);
    const store = tempReferenceStore();
    try {
      setSweepJobs(1);
      const job = await runEval(settings, { referenceStore: store.store });
      setSweepJobs(undefined);
      const alone = await runEval(settings, { referenceStore: store.store });
      expect(job.session).toEqual({ logitsRows: 'derived', prepacked: false });
      expect(alone.session).toEqual({ logitsRows: 'derived', prepacked: true });
      // references keyed apart (reference-key.ts): each computed its own
      expect(job.reference.key).not.toBe(alone.reference.key);

      const jobReport = formatEvalReport(job, describeBytes);
      expect(jobReport.split('\n').filter((line) => line.includes(NOTE))).toEqual([
        `  ${NOTE}: figures may differ from \`kvscope eval\` in their last digits`,
      ]);
      expect(formatEvalReport(alone, describeBytes)).not.toContain('prepacked');

      // saved and read back as it was
      const record = createEvalRecord(job, { createdAt: new Date('2026-12-06T10:00:00Z'), kvscopeVersion: '0.1.0' });
      expect(parseEvalRecord(serializeEvalRecord(record)).session).toEqual({ logitsRows: 'derived', prepacked: false });
    } finally {
      store.remove();
    }
  }, 240_000);

});
