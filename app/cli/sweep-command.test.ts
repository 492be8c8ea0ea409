import { describe, expect, it } from 'vitest';
import { openSweepFolder, writePoint, type SweepManifest } from '../lab/sweep-folder.js';
import type { SweepPoint } from '../lab/sweep-points.js';
import type { SweepSpec } from '../lab/sweep-spec.js';
import { ExitCode } from './io.js';
import { jobsMemoryLine, runSweepCommand, type SweepRuntime } from './sweep-command.js';
import type { SweepIo } from './sweep-io.js';
import { memorySweepIo as memoryIo } from './test-support/memory-sweep-io.js';

const POINTS: SweepPoint[] = [
  { index: 0, name: 'nbits-3', options: { nbits: 3 } },
  { index: 1, name: 'context-100000', options: { context: 100000 } },
  { index: 2, name: 'nbits-2', options: { nbits: 2 } },
  { index: 3, name: 'nbits-4', options: { nbits: 4 } },
];
const SPEC = { model: 'stories260k', points: POINTS.map((point) => point.options) } as unknown as SweepSpec;

/** Two shards' folders as a scheduler leaves them: shard 1 refused its first point, shard 2's first point failed, neither ran its second. */
function shards(io: SweepIo): void {
  for (const index of [1, 2]) {
    const manifest: SweepManifest = { format: 'kvscope-sweep', version: 1, specSha256: 'f'.repeat(64), spec: SPEC, points: POINTS, shard: { index, count: 2 } };
    openSweepFolder(io, `shards/${index}`, manifest);
  }
  const failure = (status: 'refused' | 'failed', code: 'refused' | 'invalid-input', message: string) =>
    ({ failure: { format: 'kvscope-sweep-failure', version: 1, status, error: { code, message } } } as const);
  writePoint(io, 'shards/1', POINTS[0]!, 'f'.repeat(64), null,
    failure('refused', 'refused', 'The quantized cache cannot run with these settings; the preflight refuses them:\n- nbits 3'), () => 'a');
  writePoint(io, 'shards/2', POINTS[1]!, 'f'.repeat(64), null,
    failure('failed', 'invalid-input', 'the text encodes to 5390 tokens, fewer than one window of --context 100000.'), () => 'b');
}

describe('kvscope sweep merge', () => {
  it('names every point that was refused or failed in a shard, and counts them with the missing ones', async () => {
    const io = memoryIo();
    shards(io);
    const code = await runSweepCommand(['merge', 'shards/1', 'shards/2'], { out: 'merged' }, io, {} as SweepRuntime);
    expect(code).toBe(ExitCode.ok);
    const lines = io.err.trimEnd().split('\n');
    expect(lines).toEqual([
      'kvscope sweep merge: point nbits-3 refused: The quantized cache cannot run with these settings; the preflight refuses them:',
      'kvscope sweep merge: point context-100000 failed: the text encodes to 5390 tokens, fewer than one window of --context 100000.',
      'kvscope sweep merge: 2 of 4 points in merged (2 copied); 1 failed; 1 refused; 2 missing: run their shards',
    ]);
    expect(io.out).toMatch(/context-100000\s+failed/);
    expect(JSON.parse(io.readTextFile('merged/results.json')).rows.map((row: { status: string }) => row.status)).toEqual(['refused', 'failed']);
  });

  it('says nothing more than the count when every merged point was measured or is missing', async () => {
    const io = memoryIo();
    const manifest: SweepManifest = { format: 'kvscope-sweep', version: 1, specSha256: 'f'.repeat(64), spec: SPEC, points: POINTS, shard: { index: 1, count: 2 } };
    openSweepFolder(io, 'shards/1', manifest);
    await runSweepCommand(['merge', 'shards/1'], { out: 'merged' }, io, {} as SweepRuntime);
    expect(io.err).toBe('kvscope sweep merge: 0 of 4 points in merged (0 copied); 4 missing: run their shards\n');
  });
});

describe('what --jobs N holds of the weights, said before the points (issue 23)', () => {
  const runtime = (weights: { externalBytes: number; embeddedBytes: number; perJobBytes: number } | Error) =>
    ({ modelWeights: async () => { if (weights instanceof Error) throw weights; return weights; } }) as unknown as SweepRuntime;
  const MiB = 1024 * 1024;

  it('weights in external data and inside the .onnx: one copy for every job, each named', async () => {
    expect(await jobsMemoryLine(2, 'm', runtime({ externalBytes: 0, embeddedBytes: 90 * MiB, perJobBytes: 0 }))).toBe(
      'kvscope sweep: the 2 jobs, a process each, share one copy of the model\'s weights (90.0 MiB inside the .onnx file, read in place, memory-mapped); ' +
      'each job adds its own working memory. Each job\'s RSS counts the shared weights once; the jobs\' PSS (smaps_rollup) adds up to one copy.\n');
    expect(await jobsMemoryLine(3, 'm', runtime({ externalBytes: 2 * 1024 * MiB, embeddedBytes: MiB, perJobBytes: 0 }))).toContain(
      'the 3 jobs, a process each, share one copy of the model\'s weights (2.00 GiB of external data and 1.00 MiB inside the .onnx file, read in place, memory-mapped)');
  });

  it('a legacy pair\'s prefill graph, which runs as it is: its weights once per job, said so', async () => {
    const line = await jobsMemoryLine(2, 'm', runtime({ externalBytes: 0, embeddedBytes: 40 * MiB, perJobBytes: 40 * MiB }));
    expect(line).toMatch(/share one copy .*\(40\.0 MiB inside the \.onnx file, read in place, memory-mapped\)/);
    expect(line).toContain('The prefill graph\'s 40.0 MiB of weights inside its .onnx are held once per job (a legacy pair\'s prefill graph runs as it is); --jobs 1 holds them once.\n');
  });

  it('an unreadable model: a line without figures (each point fails with its reason)', async () => {
    expect(await jobsMemoryLine(2, 'm', runtime(new Error('no such folder')))).toBe('kvscope sweep: 2 jobs: a single graph\'s weights (in external data or inside its .onnx) are memory-mapped and shared between them.\n');
  });
});
