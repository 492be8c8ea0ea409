import { describe, expect, it } from 'vitest';
import { sampleResult } from '../protocol/test-support/sample-messages.js';
import { parseRunRecord, RunRecordError } from './parse-run-record.js';
import { createRunRecord, newRunId, RUN_RECORD_FORMAT, serializeRunRecord, type RunRecord } from './run-record.js';

const CREATED = new Date('2025-01-31T12:34:56.789Z');

function sampleRecord(): RunRecord {
  return createRunRecord(sampleResult(), { id: newRunId(CREATED, () => 0.5), createdAt: CREATED, kvscopeVersion: '0.1.0' });
}

function edited(edit: (json: Record<string, unknown>) => void): string {
  const json = JSON.parse(serializeRunRecord(sampleRecord())) as Record<string, unknown>;
  edit(json);
  return JSON.stringify(json);
}

describe('run records', () => {
  it('round-trip through their JSON text, Infinity included, with the header first', () => {
    const record = sampleRecord();
    expect(record.id).toBe('20250131-123456-800000');
    const text = serializeRunRecord(record);
    expect(Object.keys(JSON.parse(text) as object).slice(0, 5)).toEqual(['format', 'version', 'id', 'createdAt', 'kvscopeVersion']);
    expect(text).toContain('"snrDb": "Infinity"');
    expect(parseRunRecord(text, 'run.json')).toStrictEqual(record);
  });

  it('refuses an empty, cut or non-JSON file and says so', () => {
    const text = serializeRunRecord(sampleRecord());
    expect(() => parseRunRecord('', 'a.json')).toThrow('a.json is empty; it is not a run record (an interrupted copy?).');
    expect(() => parseRunRecord(text.slice(0, text.length / 2), 'b.json')).toThrow(/^b\.json is not valid JSON at line \d+, column \d+ \(position \d+\)\. The file looks cut short \(an interrupted write or copy\)\.$/s);
    expect(() => parseRunRecord('{"format": "kvscope-run-record",}', 'c.json')).toThrow(RunRecordError);
  });

  it('refuses another program\'s JSON and a newer version by name', () => {
    expect(() => parseRunRecord('{"model_type": "llama"}', 'config.json')).toThrow(
      `config.json is not a kvscope run record (its "format" is missing, expected "${RUN_RECORD_FORMAT}").`,
    );
    expect(() => parseRunRecord(edited((j) => { j['version'] = 7; }), 'new.json')).toThrow(
      'new.json is a version 7 run record; this kvscope reads version 1. Update kvscope to open it.',
    );
  });

  it.each([
    ['a missing step list', (j: Record<string, unknown>) => { delete j['steps']; }, 'steps: expected an array, got nothing'],
    ['a lost step', (j: Record<string, unknown>) => { (j['steps'] as unknown[]).splice(1, 1); }, 'steps[1].step: expected 1 (steps are numbered in order), got 2'],
    ['an edited byte count', (j: Record<string, unknown>) => { (j['kvBytesTotal'] as Record<string, unknown>)['totalBytes'] = '1 MiB'; }, 'kvBytesTotal.totalBytes: expected an integer ≥ 0, got "1 MiB"'],
    ['a bad id', (j: Record<string, unknown>) => { j['id'] = '../../etc/passwd'; }, 'id: expected letters, digits, ".", "_" or "-", got "../../etc/passwd"'],
    ['a bad date', (j: Record<string, unknown>) => { j['createdAt'] = 'yesterday'; }, 'createdAt: expected an ISO 8601 date, got "yesterday"'],
  ])('names the field of %s', (_name, edit, expected) => {
    expect(() => parseRunRecord(edited(edit), 'run.json')).toThrow(`run.json is not a valid run record: ${expected}.`);
  });

  it('makes ids that sort by time and name no folder', () => {
    expect(newRunId(CREATED, () => 0)).toBe('20250131-123456-000000');
    expect(newRunId(CREATED, () => 0.9999999)).toBe('20250131-123456-fffffe');
  });
});
