/**
 * Text inside a PNG: `iTXt` chunks (PNG 1.2 §11.3.4.5, UTF-8, uncompressed) inserted after `IHDR`,
 * so an exported chart says what it shows to any PNG reader (`exiftool`, Python's PIL `img.text`)
 * and not only in its pixels. Keywords are the PNG registered ones where they fit: Title,
 * Description, Software, Source, Creation Time.
 */
const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export function withPngText(png: Uint8Array, entries: Readonly<Record<string, string>>): Uint8Array {
  if (!SIGNATURE.every((byte, i) => png[i] === byte)) throw new Error('not a PNG file (its signature is missing)');
  // IHDR is always first: 8-byte signature, then length (4) + type (4) + 13 data bytes + CRC (4)
  const afterHeader = 8 + 4 + 4 + readUint32(png, 8) + 4;
  const chunks = Object.entries(entries).map(([keyword, text]) => textChunk(keyword, text));
  const size = png.length + chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  const out = new Uint8Array(size);
  out.set(png.subarray(0, afterHeader), 0);
  let offset = afterHeader;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  out.set(png.subarray(afterHeader), offset);
  return out;
}

/** The iTXt chunks of a PNG, keyword → text (what withPngText wrote). */
export function readPngText(png: Uint8Array): Record<string, string> {
  const entries: Record<string, string> = {};
  const decoder = new TextDecoder();
  for (let offset = 8; offset + 8 <= png.length;) {
    const length = readUint32(png, offset);
    const type = String.fromCharCode(...png.subarray(offset + 4, offset + 8));
    if (type === 'iTXt') {
      const data = png.subarray(offset + 8, offset + 8 + length);
      const zero = data.indexOf(0);
      const keyword = decoder.decode(data.subarray(0, zero));
      // compression flag, method, then language tag\0 and translated keyword\0
      const language = data.indexOf(0, zero + 3);
      const translated = data.indexOf(0, language + 1);
      entries[keyword] = decoder.decode(data.subarray(translated + 1));
    }
    if (type === 'IEND') break;
    offset += 12 + length;
  }
  return entries;
}

function textChunk(keyword: string, text: string): Uint8Array {
  const encoder = new TextEncoder();
  const key = encoder.encode(keyword.slice(0, 79));
  const body = encoder.encode(text);
  // keyword \0, compression flag 0, method 0, empty language tag \0, empty translated keyword \0, text
  const data = new Uint8Array(key.length + 5 + body.length);
  data.set(key, 0);
  data.set(body, key.length + 5);
  const chunk = new Uint8Array(12 + data.length);
  writeUint32(chunk, 0, data.length);
  chunk.set([0x69, 0x54, 0x58, 0x74], 4); // "iTXt"
  chunk.set(data, 8);
  writeUint32(chunk, 8 + data.length, crc32(chunk.subarray(4, 8 + data.length)));
  return chunk;
}

function readUint32(bytes: Uint8Array, offset: number): number {
  return ((bytes[offset]! << 24) | (bytes[offset + 1]! << 16) | (bytes[offset + 2]! << 8) | bytes[offset + 3]!) >>> 0;
}

function writeUint32(bytes: Uint8Array, offset: number, value: number): void {
  bytes[offset] = value >>> 24;
  bytes[offset + 1] = (value >>> 16) & 0xff;
  bytes[offset + 2] = (value >>> 8) & 0xff;
  bytes[offset + 3] = value & 0xff;
}

let table: Uint32Array | undefined;

/** CRC-32 as PNG defines it (ISO 3309, polynomial 0xEDB88320), over a chunk's type and data. */
export function crc32(bytes: Uint8Array): number {
  if (table === undefined) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const byte of bytes) crc = table[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
