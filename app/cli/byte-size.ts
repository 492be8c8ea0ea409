/** `512 B`, `20.5 KiB`, `1.25 MiB`, `3.00 GiB`: binary units, as memory is counted. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value >= 100 ? 0 : value >= 10 ? 1 : 2)} ${units[unit]}`;
}

/** `1048576`, `512K`, `10G`, `1.5T` (binary units, as formatBytes prints them; an optional `iB`/`B`); null when it is not a size. */
export function parseByteSize(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$/i.exec(text);
  if (match === null) return null;
  const power = ['', 'K', 'M', 'G', 'T'].indexOf(match[2]!.toUpperCase());
  const bytes = Math.floor(Number(match[1]) * 1024 ** power);
  return Number.isSafeInteger(bytes) ? bytes : null;
}
