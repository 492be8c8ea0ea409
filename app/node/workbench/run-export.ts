import type { RunExport } from '../../protocol/workbench-api.js';
import { serializeRunRecord, type RunRecord } from '../../record/run-record.js';
import { runRecordToCsv } from '../../record/run-record-csv.js';

/** A run as a file to save: the whole record as JSON, or the per-step CSV (docs/run-record.md). */
export function exportRunRecord(record: RunRecord, format: 'json' | 'csv'): RunExport {
  if (format === 'csv') {
    return { fileName: `kvscope-run-${record.id}.csv`, mimeType: 'text/csv;charset=utf-8', content: runRecordToCsv(record), saved: null };
  }
  return { fileName: `kvscope-run-${record.id}.json`, mimeType: 'application/json', content: serializeRunRecord(record), saved: null };
}

/**
 * A damaged record's file as it is (RunStore.readRaw: a regular file within the cap, never through a
 * link), to mend by hand or attach to a report. Not valid UTF-8 where it was cut inside a character:
 * those bytes become U+FFFD, the rest is the file.
 */
export function exportRawRecord(id: string, bytes: Uint8Array): RunExport {
  return { fileName: `${id}.json`, mimeType: 'application/json', content: new TextDecoder('utf-8').decode(bytes), saved: null };
}
