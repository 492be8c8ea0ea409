import { describe, expect, it } from 'vitest';
import type { GenerationResult } from '../engine/generation-result.js';
import type { RunSettings, StepMetrics } from '../engine/types.js';
import { RunError } from '../protocol/run-error.js';
import type { RunHandle, RunHandlers } from '../protocol/run-handle.js';
import type { RunErrorPayload } from '../protocol/messages.js';
import { sampleResult, sampleStep } from '../protocol/test-support/sample-messages.js';
import { parseRunRecord } from '../record/parse-run-record.js';
import { UsageError, type CliIo } from './io.js';
import { runRunCommand, runSettingsFromOptions, type RunCommandRuntime } from './run-command.js';
import type { RawOptions } from './options.js';
import { SYNTHETIC_MODEL_KINDS } from '../synthetic/synthetic-spec.js';

/** An in-memory terminal and file system: `/models/tiny` is the only model folder. */
function memoryIo(): CliIo & { out: string; err: string; files: Map<string, string> } {
  const io = {
    out: '', err: '', files: new Map<string, string>(),
    readFile: () => { throw new Error('not used'); },
    readTextFile: () => { throw new Error('not used'); },
    isDirectory: (path: string) => ['/models/tiny', '/runs', '.'].includes(path),
    joinPath: (...parts: string[]) => parts.join('/'),
    writeFileAtomic: (path: string, bytes: Uint8Array) => void io.files.set(path, new TextDecoder().decode(bytes)),
    stdout: (text: string) => void (io.out += text),
    stderr: (text: string) => void (io.err += text),
  };
  return io;
}

interface FakeRun { settings?: RunSettings; cancelled: number; disposed: number; interrupt?: () => void }

/** A runtime whose runs replay `script` (text deltas and steps) and then settle with `outcome`. */
function fakeRuntime(outcome: GenerationResult | RunErrorPayload, options: { tty?: boolean; script?: (handlers: RunHandlers, run: FakeRun) => void } = {}): RunCommandRuntime & { run: FakeRun } {
  const run: FakeRun = { cancelled: 0, disposed: 0 };
  return {
    run,
    stdoutIsTty: false,
    stderrIsTty: options.tty === true,
    kvscopeVersion: '9.9.9',
    now: () => new Date('2025-02-01T00:00:00Z'),
    onInterrupt: (listener) => { run.interrupt = listener; return () => { run.interrupt = undefined; }; },
    startRun(settings, handlers): RunHandle {
      run.settings = settings;
      options.script?.(handlers, run);
      const done = 'code' in outcome ? Promise.reject(new RunError(outcome)) : Promise.resolve(outcome);
      done.catch(() => undefined);
      return { id: 1, done, cancel: () => void run.cancelled++, dispose: () => void run.disposed++ };
    },
  };
}

const TINY = { model: '/models/tiny' };

describe('kvscope run: flags', () => {
  it('builds RunSettings with transformers-style defaults: quantized cache, greedy, 64 tokens, cpu', () => {
    const settings = runSettingsFromOptions(TINY, memoryIo());
    expect(settings).toEqual({
      model: '/models/tiny', executionProvider: 'cpu', cacheMode: 'quantized',
      quantization: { backend: 'quanto', nbits: 4, axisKey: 0, axisValue: 0, groupSize: 64, residualLength: 128, layerPolicy: 'all' },
      prompt: '', maxNewTokens: 64, sampling: { greedy: true, temperature: 1, topK: 50, topP: 1, seed: 0 }, reference: false, refusePastPositions: true,
    });
  });

  it('reads every flag', () => {
    const settings = runSettingsFromOptions({
      model: 'synthetic-hybrid', onnx: 'model_fp16.onnx', ep: 'webgpu', backend: 'hqq', nbits: '8', 'axis-key': '1', 'axis-value': '1',
      'group-size': '32', 'residual-length': '16', 'layer-policy': 'full-attention-only', prompt: 'Once', 'max-new-tokens': '5',
      temperature: '0.7', 'top-k': '0', 'top-p': '0.9', seed: '42', reference: true, chat: true, 'allow-past-positions': true,
    }, memoryIo());
    expect(settings).toEqual({
      model: 'synthetic-hybrid', onnxFile: 'model_fp16.onnx', executionProvider: 'webgpu', cacheMode: 'quantized',
      quantization: { backend: 'hqq', nbits: 8, axisKey: 1, axisValue: 1, groupSize: 32, residualLength: 16, layerPolicy: 'full-attention-only' },
      prompt: 'Once', promptFormat: 'chat', maxNewTokens: 5, sampling: { greedy: false, temperature: 0.7, topK: 0, topP: 0.9, seed: 42 }, reference: true,
    });
  });

  it('--dequantize graph|host and --ignore-eos go into RunSettings; without them the default path runs and EOS stops', () => {
    expect(runSettingsFromOptions({ ...TINY, dequantize: 'host', 'ignore-eos': true }, memoryIo())).toMatchObject({ dequantize: 'host', ignoreEos: true });
    expect(runSettingsFromOptions({ ...TINY, dequantize: 'graph' }, memoryIo())).toMatchObject({ dequantize: 'graph' });
    const plain = runSettingsFromOptions(TINY, memoryIo());
    expect(plain).not.toHaveProperty('dequantize');
    expect(plain).not.toHaveProperty('ignoreEos');
  });

  it('--pad-prompt-to N left-pads the prompt as the run panel\'s fix does (RunSettings.padPromptTo)', () => {
    expect(runSettingsFromOptions({ ...TINY, prompt: 'Once', 'pad-prompt-to': '8' }, memoryIo())).toMatchObject({ prompt: 'Once', padPromptTo: 8 });
    expect(runSettingsFromOptions({ ...TINY, prompt: 'Once' }, memoryIo())).not.toHaveProperty('padPromptTo');
  });

  it.each<[string, RawOptions, RegExp]>([
    ['no model', {}, /^--model is required\.$/],
    ['a missing folder', { model: '/models/nowhere' }, new RegExp(`--model /models/nowhere is neither a folder nor an \\.onnx file\\. Pass a model folder .* or ${SYNTHETIC_MODEL_KINDS.join(' | ').replace(/[.|]/g, '\\$&')}\\.`)],
    ['an unknown provider', { ...TINY, ep: 'tpu' }, /--ep must be one of cpu, webgpu, cuda, dml, coreml, got "tpu"/],
    ['an unknown cache', { ...TINY, cache: 'static' }, /--cache must be one of dynamic, quantized/],
    ['cache flags on a dynamic cache', { ...TINY, cache: 'dynamic', nbits: '2' }, /--nbits configures the quantized cache; it has no effect with --cache dynamic/],
    ['zero new tokens', { ...TINY, 'max-new-tokens': '0' }, /--max-new-tokens must be at least 1, got 0/],
    ['a word for a number', { ...TINY, temperature: 'warm' }, /--temperature must be a number, got "warm"/],
    ['greedy and sampling', { ...TINY, greedy: true, 'top-p': '0.5' }, /--greedy picks the most likely token; --top-p only applies to sampling/],
    ['an unknown dequantization path', { ...TINY, dequantize: 'gpu' }, /--dequantize must be one of graph, host, got "gpu"/],
    ['--dequantize on a dynamic cache', { ...TINY, cache: 'dynamic', dequantize: 'graph' }, /--dequantize says where the quantized cache is dequantized; it has no effect with --cache dynamic/],
    ['padding to no tokens', { ...TINY, 'pad-prompt-to': '0' }, /--pad-prompt-to must be at least 1 token, got 0/],
    ['padding to a word', { ...TINY, 'pad-prompt-to': 'eight' }, /--pad-prompt-to must be an integer, got "eight"/],
  ])('refuses %s with a usage error', (_name, options, message) => {
    expect(() => runSettingsFromOptions(options, memoryIo())).toThrow(UsageError);
    expect(() => runSettingsFromOptions(options, memoryIo())).toThrow(message);
  });

  it("refuses bad sampling values with transformers' exact messages before a worker starts", () => {
    expect(() => runSettingsFromOptions({ ...TINY, temperature: '0' }, memoryIo())).toThrow(
      "`temperature` (=0) has to be a strictly positive float, otherwise your next token scores will be invalid. If you're looking for greedy decoding strategies, set `do_sample=False`.",
    );
    expect(() => runSettingsFromOptions({ ...TINY, 'top-p': '1.5' }, memoryIo())).toThrow('`top_p` has to be a float > 0 and < 1, but is 1.5');
    expect(() => runSettingsFromOptions({ ...TINY, 'top-k': '-1' }, memoryIo())).toThrow('`top_k` has to be a strictly positive integer, but is -1');
  });

  it('refuses an --out folder that does not exist before running', async () => {
    const runtime = fakeRuntime(sampleResult());
    await expect(runRunCommand({ ...TINY, out: '/nowhere/run.json' }, memoryIo(), runtime)).rejects.toThrow('--out /nowhere/run.json: the folder /nowhere does not exist. Create it first.');
    expect(runtime.run.settings).toBeUndefined();
  });
});

describe('kvscope run: output', () => {
  const streamText = (handlers: RunHandlers): void => {
    handlers.onText?.('Once', [403]);
    handlers.onText?.(' upon', [407]);
    handlers.onMetrics?.([sampleStep(0), sampleStep(1)] as StepMetrics[]);
  };

  it('streams the text to stdout and a summary to stderr, and writes the record atomically', async () => {
    const io = memoryIo();
    const runtime = fakeRuntime(sampleResult(), { script: streamText });
    expect(await runRunCommand({ ...TINY, out: '/runs/a.json' }, io, runtime)).toBe(0);
    expect(io.out).toBe('Once upon\n');
    expect(io.err).toMatch(/^-- 3 tokens \(max-new-tokens\) on cpu, onnxruntime 1\.30\.0: 1666\.7 tok\/s decode/);
    expect(io.err).toContain('KV cache 1.00 KiB stored (codes 128 B, scale/zero 128 B, full precision 768 B) vs fp16 896 B, fp32 1.75 KiB');
    expect(io.err).toContain('flushes per layer: 1 -');
    expect(io.err).toContain('reference: mean KL 1.00e-3 nats (max 2.00e-3), top-1 agreement 66.7%, first divergence at step 1');
    expect(io.err).toContain('wrote /runs/a.json');
    const record = parseRunRecord(io.files.get('/runs/a.json')!, 'a.json');
    expect(record).toMatchObject({ kvscopeVersion: '9.9.9', createdAt: '2025-02-01T00:00:00.000Z', text: sampleResult().text });
    expect(runtime.run.disposed).toBe(1);
    expect(runtime.run.interrupt).toBeUndefined();
  });

  it('prints one JSON object with --json and no streamed text; --out x.csv writes the CSV', async () => {
    const io = memoryIo();
    expect(await runRunCommand({ ...TINY, json: true, out: 'steps.csv' }, io, fakeRuntime(sampleResult(), { script: streamText }))).toBe(0);
    const json = JSON.parse(io.out) as Record<string, unknown>;
    expect(Object.keys(json)).toEqual([
      'ok', 'tokens', 'promptTokens', 'text', 'stopReason', 'executionProvider', 'ortVersion', 'flushes', 'kvBytes', 'kvBytesPerLayer',
      'baselineBytes', 'error', 'timings', 'reference', 'record',
    ]);
    expect(json).toMatchObject({
      ok: true, tokens: [400, 401, 402], flushes: [1, null], kvBytes: { codeBytes: 128, metadataBytes: 128, fullPrecisionBytes: 768, totalBytes: 1024 },
      baselineBytes: { fp16: 896, fp32: 1792 }, reference: { top1Agreement: 2 / 3 }, record: 'steps.csv',
    });
    expect((json['error'] as ({ key: { relFroErr: number } } | null)[])[0]!.key.relFroErr).toBe(0.1);
    expect(io.files.get('steps.csv')!.split('\r\n')[0]).toMatch(/^step,token_id,seq_length,/);
  });

  it('draws a progress bar on a terminal stderr when stdout is not one', async () => {
    const io = memoryIo();
    await runRunCommand({ ...TINY, 'max-new-tokens': '3' }, io, fakeRuntime(sampleResult(), { tty: true, script: streamText }));
    expect(io.err).toContain('\r\x1b[2K[################........] 2/3 tokens  1500.0 tok/s  KV 768 B vs fp16 768 B');
  });

  it('exits 2 on a refusal with its message and fix, and prints the error object with --json', async () => {
    const refusal: RunErrorPayload = { code: 'refused', message: 'The quantized cache cannot run with these settings', fix: 'Use --group-size 32.' };
    const io = memoryIo();
    expect(await runRunCommand({ ...TINY, json: true }, io, fakeRuntime(refusal))).toBe(2);
    expect(JSON.parse(io.out)).toEqual({ ok: false, error: refusal });
    expect(io.err).toBe('kvscope run: The quantized cache cannot run with these settings\n  fix: Use --group-size 32.\n');
  });

  it('exits 1 on a failed run', async () => {
    const io = memoryIo();
    expect(await runRunCommand(TINY, io, fakeRuntime({ code: 'worker-crashed', message: 'The generation worker crashed: boom' }))).toBe(1);
    expect(io.err).toBe('kvscope run: The generation worker crashed: boom\n');
    expect(io.out).toBe('');
  });

  it('cancels on the first Ctrl-C; further ones never dispose a run in flight (a native abort), they say it is already cancelling', async () => {
    const io = memoryIo();
    const runtime = fakeRuntime(sampleResult(), { script: (_handlers, run) => queueMicrotask(() => { run.interrupt?.(); run.interrupt?.(); run.interrupt?.(); }) });
    expect(await runRunCommand(TINY, io, runtime)).toBe(0);
    expect(runtime.run.cancelled).toBe(1);
    expect(runtime.run.disposed).toBe(1); // the command's own cleanup, once the result is in
    expect(io.err).toContain('cancelling at the next step; the result and --out are still written');
    expect(io.err.match(/already cancelling/g)).toHaveLength(1);
  });
});
