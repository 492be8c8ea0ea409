import { describe, expect, it } from 'vitest';
import type { RunSettings } from '../engine/types.js';
import { countWords } from '../lab/retrieval/test-support.js';
import type { RunHandle } from '../protocol/run-handle.js';
import { sampleResult } from '../protocol/test-support/sample-messages.js';
import { RunError } from '../protocol/run-error.js';
import { UsageError, type CliIo } from './io.js';
import type { RawOptions } from './options.js';
import { runRetrievalCommand, type RetrievalCommandRuntime } from './retrieval-command.js';

function memoryIo(options: { diskFull?: boolean } = {}): CliIo & { out: string; err: string; files: Map<string, string> } {
  const io = {
    out: '', err: '', files: new Map<string, string>(),
    readFile: () => { throw new Error('not used'); },
    readTextFile: () => { throw new Error('not used'); },
    isDirectory: (path: string) => ['/models/tiny', '/runs'].includes(path),
    joinPath: (...parts: string[]) => parts.join('/'),
    writeFileAtomic: (path: string, bytes: Uint8Array) => {
      if (options.diskFull === true) throw new Error('ENOSPC: no space left on device');
      io.files.set(path, new TextDecoder().decode(bytes));
    },
    stdout: (text: string) => void (io.out += text),
    stderr: (text: string) => void (io.err += text),
  };
  return io;
}

/**
 * A model whose quantized cache remembers only the first half of its prompt: it answers the pass key
 * when the line sits there, and says nothing useful otherwise; with the dynamic cache it always
 * answers. Counts words as tokens.
 */
function halfMemoryRuntime(): RetrievalCommandRuntime & { runs: RunSettings[] } {
  const runs: RunSettings[] = [];
  return {
    runs,
    countTokens: async () => countWords,
    onInterrupt: () => () => undefined,
    // each reading half a second after the last: a cell's end is the reading after its start
    nowMs: (() => { let ms = 0; return () => (ms += 500); })(),
    // a stand-in digest: the tests check that each sample names the prompt its run got
    sha256: (text) => `digest of ${text.length} characters, key at ${text.indexOf('The pass key is')}`,
    now: () => new Date('2026-01-02T03:04:05Z'),
    kvscopeVersion: '9.9.9',
    startRun(settings): RunHandle {
      runs.push(settings);
      const key = /The pass key is (\d+)\./.exec(settings.prompt)!;
      const remembers = settings.cacheMode === 'dynamic' || key.index < settings.prompt.length / 2;
      const text = remembers ? ` ${key[1]}. Remember it.` : ' the grass is green';
      const result = sampleResult();
      // stored bytes that tell the caches apart: a quarter for the quantized one
      const kvBytesTotal = { ...result.kvBytesTotal, totalBytes: settings.cacheMode === 'dynamic' ? 4000 : 1000 };
      return { id: runs.length, done: Promise.resolve({ ...result, text, kvBytesTotal, stopReason: 'max-new-tokens' }), cancel: () => undefined, dispose: () => undefined };
    },
  };
}

const PASSKEY: RawOptions = { task: 'passkey', model: '/models/tiny', cache: 'dynamic', lengths: '300,600', depths: '0,100', samples: '2' };

describe('kvscope eval --task', () => {
  it('runs every sample of the grid as a greedy run and prints the map of scores', async () => {
    const io = memoryIo();
    const runtime = halfMemoryRuntime();
    expect(await runRetrievalCommand(PASSKEY, io, runtime)).toBe(0);
    expect(runtime.runs).toHaveLength(2 * 2 * 2);
    for (const run of runtime.runs) {
      expect(run.cacheMode).toBe('dynamic');
      expect(run.sampling.greedy).toBe(true);
      expect(run.maxNewTokens).toBe(10); // the passkey test's max_new_tokens
    }
    // as RULER: the length holds the prompt and the new tokens
    // the longest length runs first (a length the model cannot take is refused before the others run)
    expect(countWords(runtime.runs[7]!.prompt)).toBeLessThanOrEqual(300 - 10);
    expect(countWords(runtime.runs[0]!.prompt)).toBeGreaterThan(600 - 10 - 6);
    expect(io.out).toBe('passkey (passkey), accuracy per cell, the dynamic cache\ndepth \\ length   300   600\n0 %             1.00  1.00\n100 %           1.00  1.00\n');
    expect(io.err).toContain('passkey length 600, depth 100 %: 1.00 over 2 samples in 0.5 s');
  });

  it('scores a quantized cache beside the full-precision dynamic cache on the same prompts, and their difference', async () => {
    const io = memoryIo();
    const runtime = halfMemoryRuntime();
    expect(await runRetrievalCommand({ ...PASSKEY, cache: 'quantized', nbits: '2' }, io, runtime)).toBe(0);
    expect(runtime.runs.map((run) => run.cacheMode)).toEqual(Array.from({ length: 8 }, () => ['quantized', 'dynamic']).flat());
    for (let i = 0; i < 16; i += 2) expect(runtime.runs[i + 1]!.prompt).toBe(runtime.runs[i]!.prompt);
    expect(runtime.runs[0]!.quantization.nbits).toBe(2);
    expect(io.out).toBe([
      'passkey (passkey), accuracy per cell, the quantized cache', 'depth \\ length   300   600', '0 %             1.00  1.00', '100 %           0.00  0.00',
      'passkey (passkey), accuracy per cell, the full-precision dynamic cache', 'depth \\ length   300   600', '0 %             1.00  1.00', '100 %           1.00  1.00',
      'passkey (passkey), accuracy difference per cell, quantized − dynamic', 'depth \\ length    300    600', '0 %             +0.00  +0.00', '100 %           -1.00  -1.00', '',
    ].join('\n'));
    expect(io.err).toContain('passkey length 600, depth 100 %: 0.00 (dynamic 1.00) over 2 samples in 0.5 s');
  });

  it('turns the run\'s refusal of a prompt past the model\'s positions into a --lengths fix', async () => {
    const io = memoryIo();
    const runtime = halfMemoryRuntime();
    const refused = { ...runtime, startRun: (): RunHandle => ({
      id: 1, cancel: () => undefined, dispose: () => undefined,
      done: Promise.reject(new RunError({ code: 'invalid-input', message: 'The prompt is 600 tokens; the model has max_position_embeddings = 512, and with up to 10 new tokens a prompt may take 502. The run was not started.',
        fix: 'Shorten the prompt to at most 502 tokens, or ask for fewer new tokens, or pass --allow-past-positions to run past the model\'s positions (untrained).' })),
    }) };
    expect(await runRetrievalCommand({ ...PASSKEY, lengths: '600' }, io, refused)).toBe(1);
    expect(io.err).toContain('max_position_embeddings = 512');
    expect(io.err).toContain('fix: Give --lengths of at most 512: a length holds the prompt and the 10 new tokens');
    expect(io.err).not.toContain('--allow-past-positions');
  });

  it('hands kvscope\'s cache extensions (--kv-format, --nbits-key …) to the quantized runs, not to the reference', async () => {
    const runtime = halfMemoryRuntime();
    expect(await runRetrievalCommand({ ...PASSKEY, cache: 'quantized', 'kv-format': 'llama.cpp:q4_0', 'nbits-key': '4' }, memoryIo(), runtime)).toBe(0);
    const [quantized, reference] = runtime.runs as [RunSettings, RunSettings];
    expect(JSON.stringify(quantized)).toContain('q4_0');
    expect(JSON.stringify(quantized)).toContain('"nbitsKey":4');
    expect(reference.cacheMode).toBe('dynamic');
    expect(JSON.stringify(reference)).not.toContain('q4_0');
  });

  it('--chat counts and runs every prompt through the chat template, the reference too', async () => {
    const io = memoryIo();
    const formats: string[] = [];
    const runtime = { ...halfMemoryRuntime(), countTokens: async (_model: string, format: string) => (formats.push(format), countWords) };
    const runs = (runtime as unknown as { runs: RunSettings[] }).runs;
    expect(await runRetrievalCommand({ ...PASSKEY, cache: 'quantized', chat: true, json: true }, io, runtime)).toBe(0);
    expect(formats).toEqual(['chat']);
    expect(runs).toHaveLength(16);
    for (const run of runs) expect(run.promptFormat).toBe('chat');
    expect((JSON.parse(io.out) as { promptFormat: string }).promptFormat).toBe('chat');
    // without it, plain text as before
    const plain = halfMemoryRuntime();
    expect(await runRetrievalCommand(PASSKEY, memoryIo(), plain)).toBe(0);
    for (const run of plain.runs) expect(run.promptFormat ?? 'text').toBe('text');
  });

  it('--json holds the map and every sample with its prediction and score', async () => {
    const io = memoryIo();
    expect(await runRetrievalCommand({ ...PASSKEY, cache: 'quantized', json: true, 'max-new-tokens': '4', seed: '5' }, io, halfMemoryRuntime())).toBe(0);
    type Map = { accuracy: number[][]; counts: number[][] };
    const json = JSON.parse(io.out) as { ok: boolean; maxNewTokens: number; map: Map; referenceMap: Map; samples: { depth: number; answers: string[]; prediction: string; score: number; referencePrediction: string; referenceScore: number; kvBytes: number; referenceKvBytes: number; promptTokens: number; length: number }[]; model: { onnxSha256: string } };
    expect(json.model.onnxSha256).toBe(sampleResult().model.onnxSha256);
    expect(json.ok).toBe(true);
    expect(json.maxNewTokens).toBe(4);
    expect(json.map.accuracy).toEqual([[1, 1], [0, 0]]);
    expect(json.map.counts).toEqual([[2, 2], [2, 2]]);
    expect(json.referenceMap.accuracy).toEqual([[1, 1], [1, 1]]);
    for (const sample of json.samples) {
      expect(sample.score).toBe(sample.prediction.includes(sample.answers[0]!) ? 1 : 0);
      expect(sample.referenceScore).toBe(sample.referencePrediction.includes(sample.answers[0]!) ? 1 : 0);
      expect([sample.kvBytes, sample.referenceKvBytes]).toEqual([1000, 4000]);
      expect(sample.promptTokens).toBeLessThanOrEqual(sample.length - 4);
    }
    // another seed, other samples
    const again = memoryIo();
    await runRetrievalCommand({ ...PASSKEY, cache: 'quantized', json: true, 'max-new-tokens': '4', seed: '6' }, again, halfMemoryRuntime());
    expect((JSON.parse(again.out) as typeof json).samples[0]!.answers).not.toEqual(json.samples[0]!.answers);
  });

  it('--out writes the record: every sample with its prompt digest, needle, answer and score', async () => {
    const io = memoryIo();
    const runtime = halfMemoryRuntime();
    expect(await runRetrievalCommand({ ...PASSKEY, cache: 'quantized', out: '/runs/passkey.json' }, io, runtime)).toBe(0);
    expect(io.out.endsWith('wrote /runs/passkey.json\n')).toBe(true);
    const record = JSON.parse(io.files.get('/runs/passkey.json')!) as {
      kind: string; kvscopeVersion: string; createdAt: string; map: { accuracy: number[][] };
      samples: { promptSha256: string; needles: string[]; answers: string[]; score: number; referenceScore: number }[];
    };
    expect([record.kind, record.kvscopeVersion, record.createdAt]).toEqual(['kvscope-retrieval', '9.9.9', '2026-01-02T03:04:05.000Z']);
    expect(record.map.accuracy).toEqual([[1, 1], [0, 0]]);
    // each sample's two runs (quantized, then dynamic) got the prompt its digest names; the record
    // lists the samples in the grid's order, the runs went longest length first
    const ran = runtime.runs.filter((_, i) => i % 2 === 0).map((run) => runtime.sha256(run.prompt));
    expect(record.samples.map((sample) => sample.promptSha256).sort()).toEqual(ran.sort());
    expect(record.samples.map((sample) => (sample as unknown as { length: number }).length)).toEqual([300, 300, 300, 300, 600, 600, 600, 600]);
    record.samples.forEach((sample) => {
      expect(sample.needles).toEqual([`The pass key is ${sample.answers[0]}. Remember it. ${sample.answers[0]} is the pass key.`]);
    });
    expect(new Set(record.samples.map((sample) => sample.promptSha256)).size).toBeGreaterThan(1);
  });

  it('a record that cannot be written fails the command after printing the maps', async () => {
    const io = memoryIo({ diskFull: true });
    expect(await runRetrievalCommand({ ...PASSKEY, out: '/runs/passkey.json' }, io, halfMemoryRuntime())).toBe(1);
    expect(io.out).toContain('accuracy per cell, the dynamic cache');
    expect(io.err).toContain('its record could not be written: ENOSPC: no space left on device');
    await expect(runRetrievalCommand({ ...PASSKEY, out: '/nowhere/passkey.json' }, memoryIo(), halfMemoryRuntime())).rejects.toThrow(/the folder \/nowhere does not exist/);
  });

  it('refuses what it cannot run before any run, saying what to give', async () => {
    const run = (options: RawOptions) => runRetrievalCommand(options, memoryIo(), halfMemoryRuntime());
    await expect(run({ ...PASSKEY, task: 'needle' })).rejects.toThrow(/choose one of passkey/);
    await expect(run({ ...PASSKEY, lengths: undefined })).rejects.toThrow(/--lengths is required with --task/);
    await expect(run({ ...PASSKEY, lengths: '1k,abc' })).rejects.toThrow(/"abc"/);
    await expect(run({ ...PASSKEY, lengths: '8' })).rejects.toThrow(/no room for the prompt beside 10 new tokens/);
    await expect(run({ ...PASSKEY, depths: '0,150' })).rejects.toThrow(/depth 150/);
    await expect(run({ ...PASSKEY, text: 'a.txt' })).rejects.toThrow(UsageError);
    await expect(run({ ...PASSKEY, task: 'cwe', depths: '10' })).rejects.toThrow(/cwe has none/);
    await expect(run({ ...PASSKEY, lengths: '40' })).rejects.toThrow(/give lengths of at least \d+/);
  });
});
