import { describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION, type HostMessage, type WorkerMessage } from './messages.js';
import { parseHostMessage, parseWorkerMessage, ProtocolError } from './parse-message.js';
import { SAMPLE_SETTINGS, sampleResult, sampleStep } from './test-support/sample-messages.js';

/** A deep copy with one field replaced (or removed with `undefined`) at a dotted path. */
function withField(message: object, path: string, value: unknown): unknown {
  const copy = structuredClone(message) as Record<string, unknown>;
  const keys = path.split('.');
  let target: Record<string, unknown> = copy;
  for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
  if (value === undefined) delete target[keys.at(-1)!];
  else target[keys.at(-1)!] = value;
  return copy;
}

const GOOD_WORKER_MESSAGES: WorkerMessage[] = [
  { type: 'ready', protocolVersion: PROTOCOL_VERSION },
  { type: 'metrics', id: 1, steps: [sampleStep(0), sampleStep(1), sampleStep(2)] },
  { type: 'text', id: 1, delta: 'Once', tokenIds: [403] },
  { type: 'done', id: 1, result: sampleResult() },
  { type: 'error', id: 2, error: { code: 'refused', message: 'no', fix: 'yes', diagnostics: [{ code: 'x', severity: 'error', origin: 'transformers', message: 'm', layers: [1] }] } },
  { type: 'error', id: 0, error: { code: 'protocol', message: 'unreadable' } },
];

const GOOD_HOST_MESSAGES: HostMessage[] = [
  { type: 'start', id: 1, settings: SAMPLE_SETTINGS },
  { type: 'cancel', id: 1 },
];

describe('parseWorkerMessage', () => {
  it('returns an equal copy of every well-formed message, non-finite numbers included', () => {
    for (const message of GOOD_WORKER_MESSAGES) expect(parseWorkerMessage(structuredClone(message))).toStrictEqual(message);
  });

  it('accepts non-finite numbers in their JSON form (a WebSocket transport sends JSON)', () => {
    const parsed = parseWorkerMessage(JSON.parse(JSON.stringify(withField(GOOD_WORKER_MESSAGES[1]!, 'steps.0.flushes.0.value.snrDb', 'Infinity'))));
    expect(parsed.type === 'metrics' && parsed.steps[0]!.flushes[0]!.value.snrDb).toBe(Infinity);
  });

  it('drops fields the protocol does not define', () => {
    const parsed = parseWorkerMessage({ type: 'text', id: 3, delta: 'a', tokenIds: [1], extra: { huge: true } });
    expect(parsed).toStrictEqual({ type: 'text', id: 3, delta: 'a', tokenIds: [1] });
  });

  it('throws on an unknown type in the default branch', () => {
    expect(() => parseWorkerMessage({ type: 'tokens', id: 1 })).toThrow(new ProtocolError('Unsupported worker message type "tokens".'));
  });

  it.each([
    ['not an object', 'hello', 'the value: expected an object, got "hello"'],
    ['an array', [], 'the value: expected an object, got an array of 0'],
    ['no type', { id: 1 }, 'type: expected a string, got nothing'],
    ['id 0 on text', { type: 'text', id: 0, delta: '', tokenIds: [] }, 'id: expected an integer ≥ 1, got 0'],
    ['a fractional id', { type: 'metrics', id: 1.5, steps: [] }, 'id: expected an integer ≥ 1, got 1.5'],
    ['a string token id', { type: 'text', id: 1, delta: 'a', tokenIds: ['403'] }, 'tokenIds[0]: expected an integer ≥ 0, got "403"'],
    ['a missing step timing', withField(GOOD_WORKER_MESSAGES[1]!, 'steps.1.timings.modelMs', undefined), 'steps[1].timings.modelMs: expected a number, got nothing'],
    ['a negative byte count', withField(GOOD_WORKER_MESSAGES[1]!, 'steps.0.kvBytes.0.codeBytes', -1), 'steps[0].kvBytes[0].codeBytes: expected an integer ≥ 0, got -1'],
    ['an unknown flush kind', withField(GOOD_WORKER_MESSAGES[1]!, 'steps.0.flushes.0.kind', 'evict'), 'steps[0].flushes[0].kind: expected one of prefill, flush, got "evict"'],
    ['a bad stop reason', withField(GOOD_WORKER_MESSAGES[3]!, 'result.stopReason', 'length'), 'result.stopReason: expected one of eos, max-new-tokens, cancelled, got "length"'],
    ['a short digest', withField(GOOD_WORKER_MESSAGES[3]!, 'result.model.onnxSha256', 'abc'), 'result.model.onnxSha256: expected a sha256 digest (64 lowercase hex digits), got "abc"'],
    ['an unknown error code', withField(GOOD_WORKER_MESSAGES[4]!, 'error.code', 'oops'), 'error.code: expected one of refused, invalid-input'],
    ['a text-only number', withField(GOOD_WORKER_MESSAGES[1]!, 'steps.0.tokensPerSecond', 'fast'), 'steps[0].tokensPerSecond: expected a number, got "fast"'],
    ['a text rewrite time', withField(GOOD_WORKER_MESSAGES[3]!, 'result.timings.rewriteMs', '4 ms'), 'result.timings.rewriteMs: expected a number, got "4 ms"'],
    ['an inherited field', Object.create({ type: 'ready', protocolVersion: 1 }) as object, 'type: expected a string, got nothing'],
  ])('rejects %s with the path and what it found', (_name, message, expected) => {
    expect(() => parseWorkerMessage(message)).toThrow(ProtocolError);
    expect(() => parseWorkerMessage(message)).toThrow(`Invalid message from the worker: ${expected}`);
  });
});

describe('parseHostMessage', () => {
  it('returns an equal copy of start and cancel', () => {
    for (const message of GOOD_HOST_MESSAGES) expect(parseHostMessage(structuredClone(message))).toStrictEqual(message);
  });

  it('keeps an absent onnxFile absent', () => {
    const { onnxFile: _omit, ...settings } = SAMPLE_SETTINGS;
    const parsed = parseHostMessage({ type: 'start', id: 2, settings });
    expect(parsed.type === 'start' && 'onnxFile' in parsed.settings).toBe(false);
  });

  it('carries the chat prompt format when it is set', () => {
    const start = { type: 'start' as const, id: 3, settings: { ...SAMPLE_SETTINGS, promptFormat: 'chat' as const } };
    expect(parseHostMessage(structuredClone(start))).toStrictEqual(start);
  });

  it('throws on an unknown type and on worker messages', () => {
    expect(() => parseHostMessage({ type: 'done', id: 1 })).toThrow('Unsupported host message type "done".');
    expect(() => parseHostMessage({ type: 'pause', id: 1 })).toThrow(ProtocolError);
  });

  it.each([
    ['an unknown execution provider', withField(GOOD_HOST_MESSAGES[0]!, 'settings.executionProvider', 'tpu'), 'settings.executionProvider: expected one of cpu, webgpu, cuda, dml, coreml, got "tpu"'],
    ['a string token budget', withField(GOOD_HOST_MESSAGES[0]!, 'settings.maxNewTokens', '32'), 'settings.maxNewTokens: expected an integer ≥ 0, got "32"'],
    ['an infinite temperature', withField(GOOD_HOST_MESSAGES[0]!, 'settings.sampling.temperature', Infinity), 'settings.sampling.temperature: expected a finite number, got Infinity'],
    ['a missing quantization block', withField(GOOD_HOST_MESSAGES[0]!, 'settings.quantization', undefined), 'settings.quantization: expected an object, got nothing'],
    ['an unknown prompt format', withField(GOOD_HOST_MESSAGES[0]!, 'settings.promptFormat', 'markdown'), 'settings.promptFormat: expected one of text, chat'],
    ['a bad layer policy', withField(GOOD_HOST_MESSAGES[0]!, 'settings.quantization.layerPolicy', 'some'), 'settings.quantization.layerPolicy: expected one of all, full-attention-only'],
    ['a cancel without id', { type: 'cancel' }, 'id: expected an integer ≥ 1, got nothing'],
  ])('rejects %s', (_name, message, expected) => {
    expect(() => parseHostMessage(message)).toThrow(`Invalid message from the host: ${expected}`);
  });

  it('lets an unknown backend name through: refusing it is the preflight\'s verdict, verbatim', () => {
    const parsed = parseHostMessage(withField(GOOD_HOST_MESSAGES[0]!, 'settings.quantization.backend', 'HQQ'));
    expect(parsed.type === 'start' && parsed.settings.quantization.backend).toBe('HQQ');
  });
});
