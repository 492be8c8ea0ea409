import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseEvalRecord, serializeEvalRecord } from '../lab/eval-record.js';
import { parseRunRecord } from './parse-run-record.js';
import { serializeRunRecord } from './run-record.js';

/**
 * Records written before the run and eval records shared one header (test-fixtures/: a `kvscope run
 * --out` and a `kvscope eval --out` of kvscope 0.1.0 on the synthetic model, K at 2 bits and V at 4)
 * still load, every header field and the settings as they were written.
 */
function fixture(name: string): string {
  return readFileSync(new URL(`./test-fixtures/${name}`, import.meta.url), 'utf8');
}

describe('records written by kvscope 0.1.0 still load', () => {
  it('a run record', () => {
    const record = parseRunRecord(fixture('run-record-v1.json'), 'run-record-v1.json');
    expect(record).toMatchObject({
      format: 'kvscope-run-record', version: 1, id: '20261206-092245-4055b1', createdAt: '2026-12-06T09:22:45.705Z', kvscopeVersion: '0.1.0',
      executionProvider: 'cpu', dequantize: 'graph',
    });
    expect(record.settings.quantization).toMatchObject({ backend: 'quanto', nbits: 4, groupSize: 16, residualLength: 8, extensions: { nbitsKey: 2 } });
    expect(record.extensions).toEqual([{ id: 'kv-bits-apart', label: 'K and V bits apart', detail: 'K 2 bits, V 4 bits' }]);
    expect(record.generatedTokenIds).toHaveLength(4);
    // written before the session was recorded: absent, not guessed
    expect(record.session).toBeUndefined();
    // the writer of today writes the same file again, byte for byte: the one header kept the layout
    expect(serializeRunRecord(record)).toBe(fixture('run-record-v1.json'));
  });

  it('an eval record', () => {
    const record = parseEvalRecord(fixture('eval-record-v1.json'));
    expect(record).toMatchObject({
      format: 'kvscope-eval-record', version: 1, createdAt: '2026-12-06T09:22:29.943Z', kvscopeVersion: '0.1.0',
      executionProvider: 'cpu', dequantize: 'graph', windows: { context: 32, count: 2 },
    });
    expect(record.settings.quantization).toMatchObject({ backend: 'quanto', nbits: 4, groupSize: 16, residualLength: 8, extensions: { nbitsKey: 2 } });
    expect(record.extensions).toEqual(['K and V bits apart: K 2 bits, V 4 bits']);
    expect(record.perWindow).toHaveLength(2);
    expect(record.session).toBeUndefined();
    expect(serializeEvalRecord(record)).toBe(fixture('eval-record-v1.json'));
  });

  it('the session a newer record adds is read back; a mode this build does not know is refused with its path', () => {
    for (const [name, parse] of [['eval-record-v1.json', parseEvalRecord], ['run-record-v1.json', parseRunRecord]] as const) {
      const document = JSON.parse(fixture(name)) as Record<string, unknown>;
      const withSession = JSON.stringify({ ...document, session: { logitsRows: 'derived', prepacked: false } });
      expect(parse(withSession, name).session, name).toEqual({ logitsRows: 'derived', prepacked: false });
      const unknown = JSON.stringify({ ...document, session: { logitsRows: 'some-rows', prepacked: true } });
      expect(() => parse(unknown, name), name).toThrow(`${name} is not a valid ${name.startsWith('eval') ? 'eval' : 'run'} record: session.logitsRows: expected one of input, derived, every-row, got "some-rows"`);
    }
  });
});
