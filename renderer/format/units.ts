/**
 * Number formatting for the UI: every figure that matters carries its unit (STYLE.md §12).
 * Binary prefixes for bytes (KiB, MiB) as the CLI prints them.
 */

export interface ByteUnit {
  readonly label: 'B' | 'KiB' | 'MiB' | 'GiB';
  readonly bytes: number;
}

const BYTE_UNITS: readonly ByteUnit[] = [
  { label: 'GiB', bytes: 1024 ** 3 },
  { label: 'MiB', bytes: 1024 ** 2 },
  { label: 'KiB', bytes: 1024 },
  { label: 'B', bytes: 1 },
];

/** The largest unit in which `maxBytes` is at least 1 (a chart's axis unit, fixed for a run). */
export function byteUnitFor(maxBytes: number): ByteUnit {
  for (const unit of BYTE_UNITS) if (Math.abs(maxBytes) >= unit.bytes) return unit;
  return BYTE_UNITS[BYTE_UNITS.length - 1]!;
}

/** `1.23 MiB`, `512 B`; three significant digits. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '–';
  const unit = byteUnitFor(bytes);
  const value = bytes / unit.bytes;
  return unit.label === 'B' ? `${Math.round(value)} B` : `${significant(value, 3)} ${unit.label}`;
}

/** Three significant digits without exponent notation for ordinary magnitudes. */
export function significant(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return '–';
  if (value === 0) return '0';
  const magnitude = Math.floor(Math.log10(Math.abs(value)));
  const decimals = Math.max(0, digits - 1 - magnitude);
  return value.toFixed(Math.min(decimals, 6));
}

/** Small errors (1e-2 … 1e-5) in scientific notation, as the CLI prints them. */
export function formatError(value: number): string {
  if (Number.isNaN(value)) return '–';
  if (value === Infinity) return '∞';
  if (value === 0) return '0';
  return value.toExponential(2);
}

export function formatPercent(share: number): string {
  if (!Number.isFinite(share)) return '–';
  return `${(share * 100).toFixed(1)} %`;
}

export function formatTokensPerSecond(value: number): string {
  return Number.isFinite(value) && value > 0 ? `${significant(value, 3)} tok/s` : '–';
}

/**
 * `2.91× smaller`, `1.93× larger` when the cache outgrows its baseline (a float32 residual against
 * fp16), or `the same size` within half a percent: every ratio says which way it goes.
 */
export function formatCompression(baselineBytes: number, storedBytes: number): string {
  if (!(baselineBytes > 0) || !(storedBytes > 0)) return '–';
  const ratio = baselineBytes / storedBytes;
  if (Math.abs(ratio - 1) < 0.005) return 'the same size';
  return ratio >= 1 ? `${significant(ratio, 3)}× smaller` : `${significant(1 / ratio, 3)}× larger`;
}

/** `3.2× smaller than the fp32 dynamic cache`, `the same size as …`: a ratio with its direction and its baseline. */
export function compareToBaseline(baselineBytes: number, storedBytes: number, baseline: string): string {
  const ratio = formatCompression(baselineBytes, storedBytes);
  if (ratio === '–') return '–';
  return ratio === 'the same size' ? `the same size as ${baseline}` : `${ratio} than ${baseline}`;
}

/**
 * Stored bytes against both baselines, each with its direction: `2.32× smaller than the fp32 dynamic
 * cache it replaces (255 KiB), 1.16× smaller than fp16 (128 KiB)` (one sentence for an fp16 graph).
 */
export function storedVsBaselines(memory: { totalBytes: number; fp16BaselineBytes: number; fp32BaselineBytes: number }, kvDtype: 'float32' | 'float16'): string {
  const fp16 = compareToBaseline(memory.fp16BaselineBytes, memory.totalBytes, `fp16 (${formatBytes(memory.fp16BaselineBytes)})`);
  if (kvDtype === 'float16') return `${compareToBaseline(memory.fp16BaselineBytes, memory.totalBytes, `the fp16 dynamic cache it replaces (${formatBytes(memory.fp16BaselineBytes)})`)}`;
  return `${compareToBaseline(memory.fp32BaselineBytes, memory.totalBytes, `the fp32 dynamic cache it replaces (${formatBytes(memory.fp32BaselineBytes)})`)}, ${fp16}`;
}
