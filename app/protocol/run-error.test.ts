import { describe, expect, it } from 'vitest';
import { ConfigError, KvscopeError, QuantizationError } from '../errors.js';
import { GenerationError, ModelLoadError, PreflightRefusedError, TokenizerError, ExecutionProviderRefusedError } from '../engine/engine-errors.js';
import { RunError, toRunErrorPayload, withoutStack } from './run-error.js';

describe('toRunErrorPayload', () => {
  it("classifies the engine's typed errors by name and keeps fix and diagnostics", () => {
    const refused = new PreflightRefusedError([
      { code: 'invalid-nbits', severity: 'error', origin: 'backend', message: '`nbits` for `quanto` backend has to be one of [`2`, `4`] but got 3', layers: [], fix: 'Use 2 or 4.' },
      { code: 'axis-recommendation', severity: 'info', origin: 'kvscope', message: 'note', layers: [] },
    ]);
    const payload = toRunErrorPayload(refused);
    expect(payload.code).toBe('refused');
    expect(payload.fix).toBe('Use 2 or 4.');
    expect(payload.diagnostics?.map((d) => d.code)).toEqual(['invalid-nbits', 'axis-recommendation']);
    expect(payload.message).toContain('`nbits` for `quanto` backend has to be one of [`2`, `4`] but got 3');
    expect(structuredClone(payload)).toEqual(payload);

    expect(toRunErrorPayload(new ExecutionProviderRefusedError('no webgpu', 'Use --ep cpu.')).code).toBe('refused');
    expect(toRunErrorPayload(new ModelLoadError('bad folder')).code).toBe('invalid-input');
    expect(toRunErrorPayload(new TokenizerError('no tokenizer.json')).code).toBe('invalid-input');
    expect(toRunErrorPayload(new ConfigError('bad config')).code).toBe('invalid-input');
    expect(toRunErrorPayload(new GenerationError('bad logits', 'Check the graph.'))).toEqual({ code: 'generation-failed', message: 'bad logits', fix: 'Check the graph.' });
    expect(toRunErrorPayload(new QuantizationError('bad group')).code).toBe('generation-failed');
    expect(toRunErrorPayload(new KvscopeError('x')).code).toBe('generation-failed');
  });

  it('names the class of an unexpected error, never sends a stack, and survives non-Errors', () => {
    const error = new TypeError('x is undefined');
    expect(error.stack).toMatch(/\n\s+at /);
    expect(toRunErrorPayload(error)).toEqual({ code: 'internal', message: 'TypeError: x is undefined' });
    expect(toRunErrorPayload(new Error('Non-zero status code\n    at Session.run (native)\n    at x.js:1'))).toEqual({ code: 'internal', message: 'Error: Non-zero status code' });
    expect(toRunErrorPayload('a string')).toEqual({ code: 'internal', message: 'The run failed with a non-Error value: a string' });
  });

  it('drops malformed diagnostics instead of failing the report', () => {
    const odd = Object.assign(new KvscopeError('odd'), { diagnostics: [{ nope: true }] });
    expect(toRunErrorPayload(odd)).toEqual({ code: 'generation-failed', message: 'odd' });
  });

  it('round-trips through RunError', () => {
    const payload = { code: 'refused' as const, message: 'm', fix: 'f', diagnostics: [{ code: 'c', severity: 'error' as const, origin: 'kvscope' as const, message: 'd', layers: [] }] };
    const error = new RunError(payload);
    expect(error).toBeInstanceOf(KvscopeError);
    expect(toRunErrorPayload(error)).toEqual(payload);
  });

  it('withoutStack keeps message lines and drops frames', () => {
    expect(withoutStack('first\nsecond\n    at a (b.js:1:2)')).toBe('first\nsecond');
  });
});
