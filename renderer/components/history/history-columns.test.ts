import { describe, expect, it } from 'vitest';
import { sampleResult } from '../../../app/protocol/test-support/sample-messages.js';
import { DEFAULT_HISTORY_COLUMNS, HISTORY_COLUMNS } from './history-columns.js';
import { createRunRecord, type RunRecord } from '../../../app/record/run-record.js';
import { summarizeRun } from '../../../app/record/run-summary.js';

const CREATED = new Date('2025-01-31T12:34:56.789Z');

function recordWith(extensions: Record<string, unknown> | undefined): RunRecord {
  const result = sampleResult();
  const settings = { ...result.settings, cacheMode: 'quantized' as const, quantization: { ...result.settings.quantization, ...(extensions !== undefined ? { extensions } : {}) } };
  return createRunRecord({ ...result, settings }, { id: '20250131-123456-000000', createdAt: CREATED, kvscopeVersion: '0.1.0' });
}

const cell = (record: RunRecord, column: string): string => HISTORY_COLUMNS.find((c) => c.id === column)!.text(summarizeRun(record));

describe('History\'s line of a run', () => {
  it('names transformers\' backend and bits, with its group, residual and axes', () => {
    const record = recordWith(undefined);
    const q = record.settings.quantization;
    expect(cell(record, 'cache')).toBe(`${q.backend} ${q.nbits}-bit`);
    expect(cell(record, 'group')).toBe(String(q.groupSize));
    expect(cell(record, 'residual')).toBe(String(q.residualLength));
  });

  it('names a runtime\'s write-once format as the cache, and leaves transformers\' knobs empty (they did not shape it)', () => {
    const same = recordWith({ kvFormatKey: 'llama.cpp:q4_0', kvFormatValue: 'llama.cpp:q4_0' });
    expect(summarizeRun(same)).toMatchObject({ kvFormat: 'llama.cpp:q4_0', backend: null, nbits: null, groupSize: null, residualLength: null, axisKey: null });
    expect(cell(same, 'cache')).toBe('llama.cpp:q4_0');
    expect(cell(same, 'group')).toBe('—');
    expect(cell(same, 'axes')).toBe('—');
    const apart = recordWith({ kvFormatKey: 'vllm:fp8_e4m3', kvFormatValue: 'nvfp4' });
    expect(cell(apart, 'cache')).toBe('K vllm:fp8_e4m3 · V nvfp4');
    expect(summarizeRun(apart).extensions).toContain('runtime KV format (write-once)');
  });

  it('names a layer map\'s own formats beside transformers\' backend, whose group and residual still shaped the other layers', () => {
    const mixed = recordWith({ layerMap: [{ layer: 0, nbitsKey: 8, nbitsValue: 8, formatKey: 'llama.cpp:q8_0', formatValue: 'llama.cpp:q8_0' }, { layer: 1, nbitsKey: 4, nbitsValue: 4 }] });
    const q = mixed.settings.quantization;
    expect(cell(mixed, 'cache')).toBe(`llama.cpp:q8_0 in the layer map's layers (the others ${q.backend} ${q.nbits}-bit)`);
    expect(summarizeRun(mixed)).toMatchObject({ backend: q.backend, nbits: q.nbits, groupSize: q.groupSize, residualLength: q.residualLength });
    expect(cell(mixed, 'group')).toBe(String(q.groupSize));
  });
});

describe('History\'s default columns', () => {
  it('show the settings and figures issue 25 names, and leave tokens, provider and stop reason to the Columns menu', () => {
    for (const id of ['finished', 'model', 'cache', 'group', 'residual', 'axes', 'path', 'bits', 'kl', 'top1', 'speed', 'kv']) expect(DEFAULT_HISTORY_COLUMNS).toContain(id);
    expect(DEFAULT_HISTORY_COLUMNS.filter((id) => !HISTORY_COLUMNS.some((column) => column.id === id))).toEqual([]);
    expect(HISTORY_COLUMNS.map((column) => column.id).filter((id) => !DEFAULT_HISTORY_COLUMNS.includes(id))).toEqual(['tokens', 'ep', 'stop']);
  });
});
