import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../cache/cache-config.js';
import { ApiProtocolError, parseApiHostMessage, parseApiRequest, readWorkbenchCommand } from './parse-api-message.js';

describe('parseApiRequest', () => {
  it('returns a typed copy without unknown fields', () => {
    expect(parseApiRequest({ type: 'open-model', id: 3, source: { kind: 'folder', path: '/m', extra: 1 }, onnxFile: 'onnx/model.onnx', evil: true }))
      .toEqual({ type: 'open-model', id: 3, source: { kind: 'folder', path: '/m' }, onnxFile: 'onnx/model.onnx' });
    expect(parseApiRequest({ type: 'preflight', id: 1, model: { kind: 'synthetic' }, settings: DEFAULT_QUANTIZED_CACHE_SETTINGS, sequenceLengths: [0, 7] }))
      .toMatchObject({ type: 'preflight', sequenceLengths: [0, 7] });
    expect(parseApiRequest({ type: 'list-folder', id: 2, path: null })).toEqual({ type: 'list-folder', id: 2, path: null });
    expect(parseApiRequest({ type: 'list-folder', id: 2, path: '/home' })).toEqual({ type: 'list-folder', id: 2, path: '/home' });
    // the next page of a huge folder
    expect(parseApiRequest({ type: 'list-folder', id: 2, path: '/home', offset: 2000 })).toEqual({ type: 'list-folder', id: 2, path: '/home', offset: 2000 });
    const settings = {
      model: 'synthetic', executionProvider: 'cpu', cacheMode: 'quantized', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS, prompt: 'p', padPromptTo: 8,
      maxNewTokens: 4, sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 }, reference: false,
    };
    expect(parseApiRequest({ type: 'check-run', id: 3, settings })).toEqual({ type: 'check-run', id: 3, settings });
  });

  it('refuses malformed requests, keeping the id so the caller gets the error', () => {
    const cases: [unknown, number, RegExp][] = [
      [null, 0, /expected an object/],
      [{ type: 'list-runs' }, 0, /id: expected an integer ≥ 1/],
      [{ type: 'delete-run', id: 2, runId: '../x' }, 2, /runId: expected a run id/],
      [{ type: 'open-model', id: 4, source: { kind: 'folder', path: 'a\0b' } }, 4, /source\.path: expected a non-empty path/],
      [{ type: 'export-run', id: 5, runId: 'a', format: 'xlsx' }, 5, /format: expected one of json, csv, raw/],
      [{ type: 'eval', id: 6 }, 6, /Unsupported request type "eval"/],
      [{ type: 'list-folder', id: 7, path: '' }, 7, /path: expected a non-empty path/],
      [{ type: 'list-folder', id: 8, path: '/home', offset: -1 }, 8, /offset/],
      [{ type: 'list-folder', id: 9, path: '/home', offset: 1.5 }, 9, /offset/],
    ];
    for (const [value, id, message] of cases) {
      const error = (() => {
        try {
          parseApiRequest(value);
        } catch (thrown) {
          return thrown;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(ApiProtocolError);
      expect((error as ApiProtocolError).requestId).toBe(id);
      expect((error as Error).message).toMatch(message);
    }
  });
});

describe('parseApiHostMessage', () => {
  it('reads errors, commands and results', () => {
    expect(parseApiHostMessage({ type: 'error', id: 0, error: { code: 'invalid-request', message: 'm' } })).toEqual({ type: 'error', id: 0, error: { code: 'invalid-request', message: 'm' } });
    expect(parseApiHostMessage({ type: 'command', command: { type: 'export', format: 'csv' } })).toEqual({ type: 'command', command: { type: 'export', format: 'csv' } });
    expect(parseApiHostMessage({ type: 'result', id: 9, value: { any: 'thing' } })).toEqual({ type: 'result', id: 9, value: { any: 'thing' } });
    expect(() => parseApiHostMessage({ type: 'run-text', id: 1, runId: 'r', delta: 3, tokenIds: [] })).toThrow(/delta: expected a string/);
  });

  it('knows every command', () => {
    for (const command of [{ type: 'open-model' }, { type: 'run' }, { type: 'stop' }, { type: 'model-dropped', path: '/x' }, { type: 'open-recent', source: { kind: 'synthetic-hybrid' } }]) {
      expect(readWorkbenchCommand(command, 'command')).toEqual(command);
    }
  });
});
