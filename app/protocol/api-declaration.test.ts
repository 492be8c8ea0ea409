import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../cache/cache-config.js';
import { LAB_METHODS } from '../lab/lab-api-methods.js';
import { argsToParams, buildClient, paramsToArgs, streamHandlersOf } from './api-declaration.js';
import { declaredMethod } from './api-method-index.js';
import { WORKBENCH_METHODS } from './api-methods.js';
import { ApiProtocolError, parseApiRequest } from './parse-api-message.js';

function refusal(value: unknown): string {
  try {
    parseApiRequest(value);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiProtocolError);
    return (error as Error).message;
  }
  throw new Error('accepted');
}

describe('the API declaration', () => {
  it('declares each request type once, and every argument is a declared field', () => {
    const all = [...Object.values(WORKBENCH_METHODS), ...Object.values(LAB_METHODS)];
    expect(new Set(all.map((declaration) => declaration.type)).size).toBe(all.length);
    for (const declaration of all) {
      const fields = Object.keys(declaration.params.shape);
      for (const arg of [...declaration.args.map((name) => name.replace(/\?$/, '')), ...(('options' in declaration ? declaration.options : undefined) ?? [])]) {
        expect(fields, declaration.type).toContain(arg);
      }
      expect(declaredMethod(declaration.type)?.declaration).toBe(declaration);
    }
  });

  it('turns a call into a request and back, leaving absent optional arguments out', () => {
    expect(argsToParams(WORKBENCH_METHODS.openModel, [{ kind: 'synthetic' }])).toEqual({ source: { kind: 'synthetic' } });
    expect(argsToParams(WORKBENCH_METHODS.preflight, [{ kind: 'synthetic' }, DEFAULT_QUANTIZED_CACHE_SETTINGS, { sequenceLengths: [4] }]))
      .toEqual({ model: { kind: 'synthetic' }, settings: DEFAULT_QUANTIZED_CACHE_SETTINGS, sequenceLengths: [4] });
    expect(paramsToArgs(WORKBENCH_METHODS.preflight, { model: { kind: 'synthetic' }, settings: DEFAULT_QUANTIZED_CACHE_SETTINGS }))
      .toEqual([{ kind: 'synthetic' }, DEFAULT_QUANTIZED_CACHE_SETTINGS, {}]);
    expect(paramsToArgs(LAB_METHODS.loadPoint, { sweepId: 's', pointName: 'p' })).toEqual(['s', 'p']);
    const handlers = { onText: () => undefined };
    expect(streamHandlersOf(WORKBENCH_METHODS.startRun, [{}, handlers])).toBe(handlers);
    expect(streamHandlersOf(WORKBENCH_METHODS.loadRun, ['r'])).toBeUndefined();
  });

  it('builds one client function per method, sending the declared request and resolving void methods with nothing', async () => {
    const sent: unknown[] = [];
    const client = buildClient(WORKBENCH_METHODS, async (_declaration, body) => (sent.push(body), null));
    expect(Object.keys(client).sort()).toEqual(Object.keys(WORKBENCH_METHODS).sort());
    expect(await client['cancelRun']!('r1')).toBeUndefined();
    expect(await client['pickModelFolder']!()).toBeNull();
    await client['exportRun']!('r1', 'csv');
    expect(sent).toEqual([{ type: 'cancel-run', runId: 'r1' }, { type: 'pick-model-folder' }, { type: 'export-run', runId: 'r1', format: 'csv' }]);
  });

  it('says what is wrong in the readers\' words, at the full path, also inside a field read by a shared reader', () => {
    const settings = {
      model: 'synthetic', executionProvider: 'cpu', cacheMode: 'quantized', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS, prompt: 'p',
      maxNewTokens: 4, sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 'x' }, reference: false,
    };
    expect(refusal({ type: 'start-run', id: 3, settings })).toBe('Invalid message from the page: settings.sampling.seed: expected an integer ≥ -9007199254740991, got "x".');
    expect(refusal({ type: 'start-run', id: 3 })).toBe('Invalid message from the page: settings: expected an object, got nothing.');
    expect(refusal({ type: 'open-model', id: 1, source: { kind: 'disk' } })).toBe('Invalid message from the page: source.kind: expected one of folder, synthetic, synthetic-hybrid, got "disk".');
    expect(refusal({ type: 'open-model', id: 1, source: {} })).toBe('Invalid message from the page: source.kind: expected one of folder, synthetic, synthetic-hybrid, got nothing.');
    expect(refusal({ type: 'open-model', id: 1, source: 'x' })).toBe('Invalid message from the page: source: expected an object, got "x".');
    expect(refusal({ type: 'preflight', id: 1, model: { kind: 'synthetic' }, settings: DEFAULT_QUANTIZED_CACHE_SETTINGS, sequenceLengths: [1, 2.5] }))
      .toBe('Invalid message from the page: sequenceLengths[1]: expected an integer ≥ -9007199254740991, got 2.5.');
    expect(refusal({ type: 'lab-start-sweep', id: 1, request: { kind: 'resume', jobs: 0, sweepId: 's' } })).toBe('Invalid message from the page: request.jobs: expected an integer ≥ 1, got 0.');
    expect(refusal({ type: 'lab-start-sweep', id: 1, request: { kind: 'redo', jobs: 1 } })).toBe('Invalid message from the page: request.kind: expected one of new, resume, got "redo".');
    expect(refusal({ type: 'lab-load-point', id: 1, sweepId: 's', pointName: '../x' })).toBe('Invalid message from the page: pointName: expected a point name, got "../x".');
  });
});
