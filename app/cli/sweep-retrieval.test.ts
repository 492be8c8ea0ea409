import { describe, expect, it } from 'vitest';
import type { RunSettings } from '../engine/types.js';
import { openSweepFolder, type SweepManifest } from '../lab/sweep-folder.js';
import { expandSweep } from '../lab/sweep-points.js';
import type { SweepSpec } from '../lab/sweep-spec.js';
import { countWords } from '../lab/retrieval/test-support.js';
import type { RunHandle } from '../protocol/run-handle.js';
import { sampleResult } from '../protocol/test-support/sample-messages.js';
import type { RetrievalCommandRuntime } from './retrieval-command.js';
import { memorySweepIo } from './test-support/memory-sweep-io.js';
import { RetrievalSweepRun, RETRIEVAL_REFERENCE_FILE } from './sweep-retrieval.js';

/** Each run answers the pass key with the dynamic cache, and with a quantized one only at 4 bits; counts words as tokens. */
function runtime(): RetrievalCommandRuntime & { runs: RunSettings[] } {
  const runs: RunSettings[] = [];
  return {
    runs,
    countTokens: async () => countWords,
    onInterrupt: () => () => undefined,
    nowMs: () => 0,
    sha256: (text) => `digest ${text.length} ${text.indexOf('The pass key is')}`,
    now: () => new Date('2026-01-02T03:04:05Z'),
    kvscopeVersion: '9.9.9',
    startRun(settings): RunHandle {
      runs.push(settings);
      const key = /The pass key is (\d+)\./.exec(settings.prompt)!;
      const remembers = settings.cacheMode === 'dynamic' || settings.quantization.nbits === 4;
      const result = sampleResult();
      return { id: runs.length, done: Promise.resolve({ ...result, text: remembers ? ` ${key[1]}.` : ' no', stopReason: 'max-new-tokens' }), cancel: () => undefined, dispose: () => undefined };
    },
  };
}

const SPEC: SweepSpec = {
  model: '/models/tiny', fixed: { task: 'passkey', lengths: '300,600', depths: '0,100', samples: 1, cache: 'quantized', backend: 'quanto' },
  grid: { nbits: [2, 4] }, points: [],
};

async function sweep(io: ReturnType<typeof memorySweepIo>, run: ReturnType<typeof runtime>, todo = [0, 1]) {
  const points = expandSweep(SPEC, 0);
  const manifest: SweepManifest = { format: 'kvscope-sweep', version: 1, specSha256: 'a'.repeat(64), spec: SPEC, points, shard: null };
  io.makeDirectory('/models/tiny');
  openSweepFolder(io, 'out', manifest);
  return new RetrievalSweepRun({ io, dir: 'out', manifest, points: todo.map((i) => points[i]!), runtime: run, randomSuffix: () => 'x' }).done;
}

describe('a retrieval sweep', () => {
  it('decodes each prompt with the full-precision reference once per sweep, shared by its points and by a resumed run', async () => {
    const io = memorySweepIo();
    const first = runtime();
    const outcome = await sweep(io, first);
    expect(outcome).toEqual({ interrupted: false, failures: [], storageFailure: null });
    // 4 prompts (2 lengths × 2 depths): each point's cache runs on each, the dynamic reference once on each
    expect(first.runs.filter((run) => run.cacheMode === 'quantized')).toHaveLength(8);
    expect(first.runs.filter((run) => run.cacheMode === 'dynamic')).toHaveLength(4);
    const record = JSON.parse(io.readTextFile('out/nbits-2/retrieval.json')) as { map: { accuracy: number[][] }; referenceMap: { accuracy: number[][] } };
    expect(record.map.accuracy).toEqual([[0, 0], [0, 0]]);
    expect(record.referenceMap.accuracy).toEqual([[1, 1], [1, 1]]);
    expect(Object.keys((JSON.parse(io.readTextFile(`out/${RETRIEVAL_REFERENCE_FILE}`)) as { decodes: object }).decodes)).toHaveLength(4);
    // the point redone on a later run reads the reference's decodes back: no dynamic run
    const later = runtime();
    await sweep(io, later, [1]);
    expect(later.runs.map((run) => run.cacheMode)).toEqual(['quantized', 'quantized', 'quantized', 'quantized']);
  });

  it('records a point whose options do not parse as failed, and goes on', async () => {
    const io = memorySweepIo();
    const run = runtime();
    const points = expandSweep({ ...SPEC, grid: { lengths: ['300', 'x'] } }, 0);
    const manifest: SweepManifest = { format: 'kvscope-sweep', version: 1, specSha256: 'b'.repeat(64), spec: SPEC, points, shard: null };
    io.makeDirectory('/models/tiny');
    openSweepFolder(io, 'out', manifest);
    const outcome = await new RetrievalSweepRun({ io, dir: 'out', manifest, points, runtime: run, randomSuffix: () => 'x' }).done;
    expect(outcome.failures).toEqual([expect.stringMatching(/^point 1 \(lengths-x\) failed: --lengths must be numbers separated by commas/)]);
    expect(io.exists('out/lengths-300/retrieval.json')).toBe(true);
  });
});
