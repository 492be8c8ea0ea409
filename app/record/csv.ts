/** A CSV cell: a number, text, or empty (absent). */
export type CsvCell = number | string | boolean | null;

/**
 * One RFC 4180 field. Text holding a comma, a double quote, CR or LF is quoted, inner quotes doubled.
 * Non-finite numbers are written `Infinity`, `-Infinity`, `NaN`, which Python's float() and pandas read.
 * Booleans are 1 and 0 so a spreadsheet can average them (top-1 agreement rate).
 */
export function csvField(cell: CsvCell): string {
  if (cell === null) return '';
  if (typeof cell === 'boolean') return cell ? '1' : '0';
  const text = String(cell);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Rows joined with CRLF (RFC 4180), ending with one. */
export function csvText(rows: readonly (readonly CsvCell[])[]): string {
  return rows.map((row) => row.map(csvField).join(',')).join('\r\n') + '\r\n';
}
