import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * The external data files an ONNX graph names (TensorProto.external_data entries `location`), read
 * from the graph's bytes without a protobuf schema: each entry is a StringStringEntryProto whose key
 * (field 1) is "location" and whose value (field 2) is the file name, so the bytes
 * `0a 08 "location" 12 <varint length> <name>` mark every one. A weight file changed beside an
 * unchanged graph must change the evaluation's reference key, hence this.
 */
const MARKER = Buffer.from([0x0a, 0x08, ...Buffer.from('location', 'latin1'), 0x12]);
const CHUNK = 1 << 24;

export function externalDataFiles(onnxPath: string): string[] {
  const names = new Set<string>();
  const fd = openSync(onnxPath, 'r');
  try {
    const size = fstatSync(fd).size;
    // Overlapping chunks, so a marker and its name never straddle a boundary unseen.
    const overlap = MARKER.length + 5 + 4096;
    const buffer = Buffer.alloc(Math.min(size, CHUNK + overlap));
    for (let offset = 0; offset < size; offset += CHUNK) {
      const length = readSync(fd, buffer, 0, Math.min(buffer.length, size - offset), offset);
      scan(buffer.subarray(0, length), names);
    }
  } finally {
    closeSync(fd);
  }
  return [...names].sort();
}

function scan(bytes: Buffer, names: Set<string>): void {
  for (let at = bytes.indexOf(MARKER); at >= 0; at = bytes.indexOf(MARKER, at + 1)) {
    let cursor = at + MARKER.length;
    let length = 0;
    let shift = 0;
    for (;;) {
      if (cursor >= bytes.length || shift > 28) return;
      const byte = bytes[cursor++]!;
      length |= (byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) break;
      shift += 7;
    }
    if (length === 0 || cursor + length > bytes.length) continue;
    const name = bytes.subarray(cursor, cursor + length).toString('utf8');
    // A location is a relative path beside the graph; anything else is not one of these entries.
    if (!name.includes('\0') && !name.startsWith('/')) names.add(name);
  }
}
