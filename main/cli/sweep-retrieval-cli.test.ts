import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SweepResults } from '../../app/lab/sweep-results.js';
import { cli, useCliSandbox } from './test-support/cli-sandbox.js';

const sandbox = useCliSandbox('sweep-retrieval');

/** passkey on the retrieval testbed at 256 tokens, three depths, quanto 2- and 4-bit: the sweep form of `kvscope eval --task`. */
function writeSpec(): string {
  const path = join(sandbox.dir(), 'passkey.json');
  writeFileSync(path, JSON.stringify({
    model: 'synthetic-retrieval',
    fixed: { task: 'passkey', lengths: '256', depths: '0,50,100', samples: 1, seed: 0, cache: 'quantized', backend: 'quanto' },
    grid: { nbits: [2, 4] },
  }));
  return path;
}

describe('kvscope sweep with a retrieval task (synthetic-retrieval, 256 tokens)', () => {
  it('runs each point as the retrieval eval: one record per point, the accuracies and maps in results.json/csv, resumable', async () => {
    const out = join(sandbox.dir(), 'sweep');
    const first = await cli(['sweep', '--spec', writeSpec(), '--out', out]);
    expect(first.code, first.err).toBe(0);
    // each cell's line, under its point
    expect(first.err).toMatch(/kvscope sweep: point nbits-2: passkey length 256, depth 50 %: 0\.00 \(dynamic 1\.00\) over 1 sample/);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as SweepResults;
    expect(results.rows.map((row) => [row.name, row.status, row.retrieval?.accuracy, row.retrieval?.accuracyReference])).toEqual([
      ['nbits-2', 'ok', 0, 1], ['nbits-4', 'ok', 1, 1],
    ]);
    const twoBit = results.rows[0]!.retrieval!;
    expect(twoBit.map).toMatchObject({ lengths: [256], depths: [0, 50, 100], accuracy: [[0], [0], [0]] });
    expect(twoBit.referenceMap.accuracy).toEqual([[1], [1], [1]]);
    expect(results.rows[0]!.settings).toMatchObject({ cacheMode: 'quantized', backend: 'quanto', nbits: 2 });
    // each point's record is the one `kvscope eval --task --out` writes
    const record = JSON.parse(readFileSync(join(out, 'nbits-4', 'retrieval.json'), 'utf8')) as { kind: string; samples: unknown[] };
    expect(record.kind).toBe('kvscope-retrieval');
    expect(record.samples).toHaveLength(3);
    // the reference decoded once for the sweep: one decode per prompt, shared by both points
    const reference = JSON.parse(readFileSync(join(out, 'retrieval-reference.json'), 'utf8')) as { decodes: Record<string, unknown> };
    expect(Object.keys(reference.decodes)).toHaveLength(3);
    const csv = readFileSync(join(out, 'results.csv'), 'utf8').split(/\r?\n/);
    expect(csv[0]).toMatch(/,dequantize,logits_rows,prepacked,task,accuracy,accuracy_base,samples,kv_bytes_longest$/);
    expect(csv[1]).toMatch(/,passkey,0,1,3,\d+$/);
    expect(first.out).toMatch(/nbits-2 +ok +passkey +0\.00 +1\.00 +-1\.00 +3/);

    // resumable as other sweeps are: a complete point is kept, a missing one redone (its reference read back, not decoded again)
    rmSync(join(out, 'nbits-4'), { recursive: true });
    const again = await cli(['sweep', '--spec', writeSpec(), '--out', out]);
    expect(again.code, again.err).toBe(0);
    expect(again.err).toContain('2 points; 1 complete, 1 to run');
    expect(again.err).not.toContain('point nbits-2:');
    expect(existsSync(join(out, 'nbits-4', 'retrieval.json'))).toBe(true);
    expect((JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as SweepResults).rows[1]!.retrieval!.accuracy).toBe(1);
  }, 120_000);

  it('refuses a sweep that mixes retrieval points with text points, and a retrieval key without a task', async () => {
    const spec = join(sandbox.dir(), 'mixed.json');
    writeFileSync(spec, JSON.stringify({ model: 'synthetic-retrieval', points: [{ task: 'passkey', lengths: '256' }, { nbits: 2 }] }));
    const mixed = await cli(['sweep', '--spec', spec, '--out', join(sandbox.dir(), 'mixed')]);
    expect(mixed.code).not.toBe(0);
    expect(mixed.err).toMatch(/a sweep is all retrieval points or none/);
    writeFileSync(spec, JSON.stringify({ model: 'synthetic-retrieval', fixed: { lengths: '256' }, grid: { nbits: [2, 4] } }));
    const stray = await cli(['sweep', '--spec', spec, '--out', join(sandbox.dir(), 'stray')]);
    expect(stray.code).not.toBe(0);
    expect(stray.err).toMatch(/"lengths" belongs to a retrieval eval; give "task"/);
  });
});
