import { describe, expect, it } from 'vitest';
import { sampleResult } from '../protocol/test-support/sample-messages.js';
import { csvField, csvText } from './csv.js';
import { RUN_CSV_COLUMNS, runRecordToCsv } from './run-record-csv.js';

/** A minimal RFC 4180 reader for the test: quoted fields, doubled quotes, CRLF rows. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; } else if (c === '\r' && text[i + 1] === '\n') { row.push(field); rows.push(row); row = []; field = ''; i++; } else field += c;
  }
  return rows;
}

describe('CSV export', () => {
  it('quotes commas, quotes and line breaks, and nothing else', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(Infinity)).toBe('Infinity');
    expect(csvField(null)).toBe('');
    expect(csvField(true)).toBe('1');
    expect(parseCsv(csvText([['x', 'a,"b"\r\nc'], [1, null]]))).toEqual([['x', 'a,"b"\r\nc'], ['1', '']]);
  });

  it('writes one row per step with summed layer bytes, this step\'s quantize errors and the reference lane', () => {
    const rows = parseCsv(runRecordToCsv(sampleResult()));
    expect(rows[0]).toEqual([...RUN_CSV_COLUMNS]);
    expect(rows).toHaveLength(4);
    const byColumn = rows.slice(1).map((row) => Object.fromEntries(row.map((v, i) => [RUN_CSV_COLUMNS[i], v])));
    expect(byColumn.map((r) => r['step'])).toEqual(['0', '1', '2']);
    expect(byColumn[0]).toMatchObject({
      token_id: '400', seq_length: '5', model_ms: '0.4', tokens_per_second: '0',
      // layer 0 of sampleLayerMemory(5, 4) (layer 1 has no cache): 64 values per token, float32
      kv_code_bytes: '128', kv_metadata_bytes: '128', kv_full_precision_bytes: '256', kv_total_bytes: '512',
      kv_fp16_baseline_bytes: '640', kv_fp32_baseline_bytes: '1280', materialized_kv_bytes: '1024', rss_bytes: '80000000',
      quantize_events: '1', flushes: '0', key_rel_fro_err_mean: '0.05', value_rel_fro_err_max: '0',
      kl_divergence: '0', top1_agrees: '1', reference_token_id: '400',
    });
    expect(byColumn[1]).toMatchObject({ quantize_events: '0', flushes: '0', key_rel_fro_err_mean: '', value_rel_fro_err_max: '', top1_agrees: '0', reference_token_id: '7' });
    expect(byColumn[2]).toMatchObject({ quantize_events: '2', flushes: '2', key_rel_fro_err_mean: '0.2', key_rel_fro_err_max: '0.3', value_rel_fro_err_mean: String((0.2 + 0.4) / 2), value_rel_fro_err_max: '0.4' });
  });

  it('names the active kvscope extensions on every row, and leaves the column empty for a transformers run', () => {
    const extensions = [
      { id: 'kv-bits-apart', label: 'K and V bits apart', detail: 'K 8 bits, V 4 bits' },
      { id: 'attention-sinks', label: 'attention sinks', detail: 'first 4 tokens of each layer in full precision, never re-quantized' },
    ] as const;
    const column = RUN_CSV_COLUMNS.indexOf('kvscope_extensions');
    const rows = parseCsv(runRecordToCsv({ steps: sampleResult().steps, extensions }));
    expect(rows[0]![column]).toBe('kvscope_extensions');
    expect(rows.slice(1).map((row) => row[column])).toEqual(Array(3).fill(
      'K and V bits apart (K 8 bits, V 4 bits); attention sinks (first 4 tokens of each layer in full precision, never re-quantized)'));
    expect(parseCsv(runRecordToCsv(sampleResult())).slice(1).map((row) => row[column])).toEqual(['', '', '']);
  });

  it('writes the reference lane\'s time, so the parts add up to at most the step\'s total', () => {
    const steps = sampleResult().steps.map((step) => ({ ...step, timings: { ...step.timings, referenceMs: 0.03, totalMs: step.timings.totalMs + 0.03 } }));
    const rows = parseCsv(runRecordToCsv({ steps }));
    const at = (column: (typeof RUN_CSV_COLUMNS)[number]): number => RUN_CSV_COLUMNS.indexOf(column);
    for (const row of rows.slice(1)) {
      expect(row[at('reference_ms')]).toBe('0.03');
      const parts = (['dequantize_ms', 'model_ms', 'quantize_ms', 'reference_ms'] as const).map((column) => Number(row[at(column)]));
      expect(parts.reduce((sum, part) => sum + part, 0)).toBeLessThanOrEqual(Number(row[at('total_ms')]) + 1e-9);
    }
    expect(parseCsv(runRecordToCsv(sampleResult())).slice(1).map((row) => row[at('reference_ms')])).toEqual(['', '', '']);
  });

  it('says on every row which path dequantized the cache, empty for a dynamic cache', () => {
    const column = RUN_CSV_COLUMNS.indexOf('dequantize_path');
    expect(parseCsv(runRecordToCsv({ steps: sampleResult().steps, dequantize: 'host' })).slice(1).map((row) => row[column])).toEqual(['host', 'host', 'host']);
    expect(parseCsv(runRecordToCsv({ steps: sampleResult().steps })).slice(1).map((row) => row[column])).toEqual(['', '', '']);
  });

  it('leaves the reference columns empty without a reference lane', () => {
    const result = sampleResult();
    const steps = result.steps.map(({ reference: _none, ...step }) => step);
    const rows = parseCsv(runRecordToCsv({ steps }));
    const kl = RUN_CSV_COLUMNS.indexOf('kl_divergence');
    expect(rows.slice(1).map((r) => r.slice(kl, kl + 3))).toEqual([['', '', ''], ['', '', ''], ['', '', '']]);
  });
});
