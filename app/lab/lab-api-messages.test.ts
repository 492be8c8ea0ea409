import { describe, expect, it } from 'vitest';
import { parseApiHostMessage, parseApiRequest } from '../protocol/parse-api-message.js';

describe('the Lab in the workbench API transport', () => {
  it('reads lab requests and refuses malformed ones with the request id', () => {
    expect(parseApiRequest({ type: 'lab-list-sweeps', id: 3 })).toEqual({ type: 'lab-list-sweeps', id: 3 });
    expect(parseApiRequest({ type: 'lab-start-sweep', id: 4, request: { kind: 'resume', sweepId: 'abc', jobs: 2 } }))
      .toEqual({ type: 'lab-start-sweep', id: 4, request: { kind: 'resume', sweepId: 'abc', jobs: 2 } });
    expect(() => parseApiRequest({ type: 'lab-load-sweep', id: 5, sweepId: '../etc' })).toThrow(expect.objectContaining({ requestId: 5 }));
    expect(() => parseApiRequest({ type: 'lab-load-point', id: 6, sweepId: 'a', pointName: 'x/../y' })).toThrow(/point name/);
    expect(() => parseApiRequest({ type: 'lab-start-sweep', id: 7, request: { kind: 'new', name: 'n', settings: [], jobs: 1 } })).toThrow(/request\.settings: expected an object, got an array/);
    expect(() => parseApiRequest({ type: 'lab-start-sweep', id: 8, request: { kind: 'new', name: 'n', settings: {}, jobs: 0 } })).toThrow(/jobs/);
  });

  it('reads a sweep\'s events, non-finite numbers included', () => {
    const row = {
      index: 0, name: 'p', status: 'ok', reason: null, options: { nbits: 4 },
      settings: { cacheMode: 'quantized', backend: 'hqq', nbits: 4, axisKey: 1, axisValue: 1, groupSize: 32, residualLength: 32, layers: 'all', parts: 'both' },
      result: Object.fromEntries(['tokens', 'ppl', 'pplError', 'pplReference', 'pplReferenceError', 'deltaPpl', 'deltaPplError', 'pplRatio', 'pplRatioError', 'kldMean',
        'kldMeanError', 'kldMedian', 'kldP99', 'kldP999', 'kldMax', 'top1Agreement', 'top1AgreementError', 'deltaPMean', 'deltaPMeanError', 'deltaPRms', 'deltaPRmsError',
        'bitsPerValue', 'storedBytes', 'fp16BaselineBytes'].map((key) => [key, key === 'ppl' ? 'Infinity' : 1])),
    };
    const event = parseApiHostMessage({ type: 'lab-sweep-point', id: 2, sweepId: 's1', row });
    expect(event).toMatchObject({ type: 'lab-sweep-point', id: 2, sweepId: 's1', row: { name: 'p', result: { ppl: Infinity } } });
    expect(() => parseApiHostMessage({ type: 'lab-sweep-point', id: 2, sweepId: 's1', row: { ...row, status: 'maybe' } })).toThrow(/status/);
    expect(parseApiHostMessage({ type: 'lab-sweep-progress', id: 2, sweepId: 's1', progress: { done: 1, total: 3, running: ['p'] } }))
      .toEqual({ type: 'lab-sweep-progress', id: 2, sweepId: 's1', progress: { done: 1, total: 3, running: ['p'] } });
  });

  it('keeps a runtime format point\'s family, formats and format bits across the transport (the hand reader dropped them)', () => {
    const row = {
      index: 1, name: 'q4_0', status: 'ok', reason: null, options: { preset: 'runtimes' },
      settings: {
        cacheMode: 'quantized', backend: 'quanto', nbits: 4, axisKey: 0, axisValue: 0, groupSize: 32, residualLength: 0, layers: 'all', parts: 'both',
        family: 'llama.cpp', kvFormatKey: 'q4_0', kvFormatValue: 'q4_0',
      },
      result: { ...Object.fromEntries(['tokens', 'ppl', 'pplError', 'pplReference', 'pplReferenceError', 'deltaPpl', 'deltaPplError', 'pplRatio', 'pplRatioError', 'kldMean',
        'kldMeanError', 'kldMedian', 'kldP99', 'kldP999', 'kldMax', 'top1Agreement', 'top1AgreementError', 'deltaPMean', 'deltaPMeanError', 'deltaPRms', 'deltaPRmsError',
        'bitsPerValue', 'storedBytes', 'fp16BaselineBytes'].map((key) => [key, 1])), formatBitsPerValue: 4.5 },
    };
    expect(parseApiHostMessage({ type: 'lab-sweep-point', id: 2, sweepId: 's1', row })).toEqual({ type: 'lab-sweep-point', id: 2, sweepId: 's1', row });
  });

  it('carries a retrieval point\'s accuracies and maps (a sweep with a task), and refuses a malformed map', () => {
    const map = { lengths: [256], depths: [0, null], accuracy: [[0], [null]] };
    const row = {
      index: 0, name: 'nbits-2', status: 'ok', reason: null, options: { task: 'passkey', nbits: 2 }, settings: null, result: null,
      retrieval: { task: 'passkey', metric: 'passkey', accuracy: 0, accuracyReference: 1, samples: 2, kvBytesLongest: 4096, map, referenceMap: map },
    };
    expect(parseApiHostMessage({ type: 'lab-sweep-point', id: 2, sweepId: 's1', row })).toEqual({ type: 'lab-sweep-point', id: 2, sweepId: 's1', row });
    const bad = { ...row, retrieval: { ...row.retrieval, map: { ...map, accuracy: [['x']] } } };
    expect(() => parseApiHostMessage({ type: 'lab-sweep-point', id: 2, sweepId: 's1', row: bad })).toThrow(/retrieval\.map\.accuracy/);
  });
});
