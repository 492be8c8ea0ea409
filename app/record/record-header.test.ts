import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createEvalRecord, parseEvalRecord, serializeEvalRecord } from '../lab/eval-record.js';
import { sampleResult } from '../protocol/test-support/sample-messages.js';
import { parseRunRecord, RunRecordError } from './parse-run-record.js';
import { recordHeader, RecordError } from './record-header.js';
import { createRunRecord, serializeRunRecord } from './run-record.js';

const CREATED = new Date('2025-01-31T12:34:56.789Z');
const EVAL_TEXT = readFileSync(new URL('./test-fixtures/eval-record-v1.json', import.meta.url), 'utf8');

function editedEval(edit: (json: Record<string, unknown>) => void): string {
  const json = JSON.parse(EVAL_TEXT) as Record<string, unknown>;
  edit(json);
  return JSON.stringify(json);
}

describe('one record header for runs and evaluations', () => {
  it('is written by one function, the id for runs only, fields in the order the files show them', () => {
    expect(recordHeader('run', { id: 'r1', createdAt: CREATED, kvscopeVersion: '0.1.0' })).toStrictEqual({
      format: 'kvscope-run-record', version: 1, id: 'r1', createdAt: '2025-01-31T12:34:56.789Z', kvscopeVersion: '0.1.0',
    });
    expect(Object.keys(recordHeader('eval', { id: 'ignored', createdAt: CREATED, kvscopeVersion: '0.1.0' }))).toEqual(['format', 'version', 'createdAt', 'kvscopeVersion']);
    const run = createRunRecord(sampleResult(), { id: 'r1', createdAt: CREATED, kvscopeVersion: '0.1.0' });
    expect(Object.keys(JSON.parse(serializeRunRecord(run)) as object).slice(0, 5)).toEqual(['format', 'version', 'id', 'createdAt', 'kvscopeVersion']);
    const { format: _format, version: _version, createdAt: _createdAt, kvscopeVersion: _kvscopeVersion, ...result } = parseEvalRecord(EVAL_TEXT);
    const evaluation = createEvalRecord(result, { createdAt: CREATED, kvscopeVersion: '0.2.0' });
    expect(Object.keys(JSON.parse(serializeEvalRecord(evaluation)) as object).slice(0, 5)).toEqual(['format', 'version', 'createdAt', 'kvscopeVersion', 'settings']);
    expect(evaluation).toMatchObject({ createdAt: '2025-01-31T12:34:56.789Z', kvscopeVersion: '0.2.0' });
  });

  it('refuses another kind\'s record, another program\'s JSON and a newer version in the same words for both kinds', () => {
    const run = serializeRunRecord(createRunRecord(sampleResult(), { id: 'r1', createdAt: CREATED, kvscopeVersion: '0.1.0' }));
    expect(() => parseEvalRecord(run, 'run.json')).toThrow('run.json is not a kvscope eval record (its "format" is something else, expected "kvscope-eval-record").');
    expect(() => parseRunRecord(EVAL_TEXT, 'eval.json')).toThrow('eval.json is not a kvscope run record (its "format" is something else, expected "kvscope-run-record").');
    expect(() => parseEvalRecord('{"model_type": "llama"}', 'config.json')).toThrow('config.json is not a kvscope eval record (its "format" is missing, expected "kvscope-eval-record").');
    expect(() => parseEvalRecord(editedEval((j) => { j['version'] = 2; }), 'new.json')).toThrow(
      'new.json is a version 2 eval record; this kvscope reads version 1. Update kvscope to open it.',
    );
    expect(() => parseEvalRecord('', 'a.json')).toThrow('a.json is empty; it is not an eval record (an interrupted copy?).');
    expect(() => parseEvalRecord(EVAL_TEXT.slice(0, 100), 'b.json')).toThrow(/^b\.json is not valid JSON at line \d+, column \d+ \(position \d+\)\. The file looks cut short/);
    expect(() => parseEvalRecord('', 'a.json')).toThrow(RecordError);
    // a run record's errors stay RunRecordErrors: the run store tells a damaged record from an unreadable file by them
    expect(() => parseRunRecord('', 'a.json')).toThrow(RunRecordError);
  });

  it.each([
    ['a bad date', (j: Record<string, unknown>) => { j['createdAt'] = 'yesterday'; }, 'createdAt: expected an ISO 8601 date, got "yesterday"'],
    ['a version that is no number', (j: Record<string, unknown>) => { j['version'] = 'one'; }, 'version: expected 1, got "one"'],
    ['no kvscope version', (j: Record<string, unknown>) => { delete j['kvscopeVersion']; }, 'kvscopeVersion: expected a string, got nothing'],
    ['an edited setting', (j: Record<string, unknown>) => { (j['settings'] as { quantization: Record<string, unknown> }).quantization['nbits'] = '4'; },
      'settings.quantization.nbits: expected an integer ≥ -9007199254740991, got "4"'],
  ])('names the field of an eval record with %s, as a run record\'s', (_name, edit, expected) => {
    expect(() => parseEvalRecord(editedEval(edit), 'eval.json')).toThrow(`eval.json is not a valid eval record: ${expected}.`);
  });
});
