import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../app/cache/cache-config.js';
import { modelInfo } from '../../app/engine/model-diagnostic.js';
import type { RunSettings } from '../../app/engine/types.js';
import { expectedPath, ranPath } from './dequantize-path.js';

const SETTINGS: RunSettings = {
  model: 'synthetic', executionProvider: 'cpu', cacheMode: 'quantized', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS,
  prompt: 'Once', maxNewTokens: 8, sampling: { greedy: true, temperature: 1, topK: 50, topP: 1, seed: 0 }, reference: false,
};
const SINKS = { ...SETTINGS, quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, extensions: { sinkTokens: 4 } } };

describe('the dequantize path in words', () => {
  it('expects the graph by default, the host where the engine\'s rule sends sinks there, and an explicit choice as chosen', () => {
    expect(expectedPath(SETTINGS, 5)).toMatchObject({ path: 'graph', ran: false, why: 'the default: in the graph where the settings allow' });
    expect(expectedPath(SINKS, 5)).toMatchObject({ path: 'host', ran: false, why: expect.stringContaining('attention sinks') });
    expect(expectedPath({ ...SETTINGS, dequantize: 'host' }, 5)).toMatchObject({ path: 'host', why: 'chosen in the settings' });
    expect(expectedPath({ ...SETTINGS, cacheMode: 'dynamic' }, 5)).toBeNull();
  });

  it('reads the path that ran from the result, with the engine\'s reason when the default went to the host', () => {
    const note = modelInfo('dequantize-path', 'Dequantized on the host (JavaScript), not in the graph: sinks.');
    expect(ranPath({ settings: SINKS, dequantize: 'host', diagnostics: [note] })).toEqual({ path: 'host', short: 'on the host', why: note.message, ran: true });
    expect(ranPath({ settings: SETTINGS, dequantize: 'graph', diagnostics: [] })).toMatchObject({ path: 'graph', ran: true });
    expect(ranPath({ settings: { ...SETTINGS, cacheMode: 'dynamic' }, diagnostics: [] })).toBeNull();
  });
});
