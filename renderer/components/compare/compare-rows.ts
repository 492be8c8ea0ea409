import type { RunRecord } from '../../../app/record/run-record.js';
import { bitsPerValue, modelName } from '../../../app/record/run-summary.js';
import { ranPath } from '../../format/dequantize-path.js';
import { describePrompt, describeSettings } from '../../format/run-labels.js';
import { formatBytes, formatError, formatPercent, formatTokensPerSecond, storedVsBaselines } from '../../format/units.js';

/** One line of the comparison table: shown in Compare and written by its CSV and LaTeX exports. */
export interface CompareRow {
  readonly id: string;
  readonly label: string;
  value(record: RunRecord): string;
  /** the figure as a number, for CSV/LaTeX (null: text only, or not measured) */
  number?(record: RunRecord): number | null;
}

export const COMPARE_ROWS: readonly CompareRow[] = [
  { id: 'run', label: 'Run', value: (r) => r.id },
  { id: 'model', label: 'Model', value: (r) => `${modelName(r)} (${r.model.onnxFile})` },
  { id: 'cache', label: 'Cache', value: (r) => describeSettings(r.settings) },
  { id: 'path', label: 'Dequantized', value: (r) => ranPath(r)?.short ?? '—' },
  { id: 'extensions', label: 'kvscope extensions', value: (r) => (r.extensions ?? []).map((e) => e.label).join(', ') || 'none' },
  { id: 'prompt', label: 'Prompt', value: (r) => describePrompt(r.settings) },
  { id: 'tokens', label: 'Tokens', value: (r) => String(r.generatedTokenIds.length), number: (r) => r.generatedTokenIds.length },
  { id: 'flushes', label: 'Flushes per layer', value: (r) => r.flushCounts.filter((c) => c !== null).join(' ') || '—' },
  { id: 'kv', label: 'KV stored (end)', value: (r) => `${formatBytes(r.kvBytesTotal.totalBytes)}: ${storedVsBaselines(r.kvBytesTotal, r.model.kvDtype)}`, number: (r) => r.kvBytesTotal.totalBytes },
  { id: 'bits', label: 'Bits per value', value: (r) => bitsPerValue(r)?.toFixed(2) ?? '—', number: (r) => bitsPerValue(r) },
  { id: 'speed', label: 'Decode speed', value: (r) => formatTokensPerSecond(r.timings.decodeTokensPerSecond), number: (r) => r.timings.decodeTokensPerSecond },
  { id: 'kl', label: 'Mean KL', value: (r) => (r.reference === null ? '—' : `${formatError(r.reference.meanKl)} nats`), number: (r) => r.reference?.meanKl ?? null },
  { id: 'top1', label: 'Top-1 agreement', value: (r) => (r.reference === null ? '—' : formatPercent(r.reference.top1Agreement)), number: (r) => r.reference?.top1Agreement ?? null },
];
