import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-write.js';
import type { ReferenceSource, WindowReference } from '../../lab/reference-source.js';
import { referenceCacheDir } from './lab-cache-dir.js';

/**
 * The lab's on-disk references (reference-source.ts), one file per content key:
 * `<key>.ref` = 8 bytes `KVSREF01`, a uint32 (little-endian) header length, the header as UTF-8 JSON
 * (`{ key, vocab, rows: [scored rows per window] }`), zero padding to a multiple of 4, then every
 * window's `[rows, vocab]` float32 logits (little-endian), windows in order. Written atomically, so a
 * file either is complete or is not there; one that does not match its key or its size is ignored and
 * computed again. The key is made of everything the logits depend on (reference-key.ts).
 */
const MAGIC = 'KVSREF01';

interface Header {
  readonly key: string;
  readonly vocab: number;
  readonly rows: readonly number[];
}

export class ReferenceStore {
  readonly #dir: string;

  constructor(dir = referenceCacheDir()) {
    this.#dir = dir;
  }

  path(key: string): string {
    return join(this.#dir, `${key}.ref`);
  }

  /** The stored reference of `key`, or null when there is none (or it is unusable). */
  open(key: string): ReferenceSource | null {
    const path = this.path(key);
    if (!existsSync(path)) return null;
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch {
      return null;
    }
    try {
      const header = readHeader(fd, key);
      if (header === null) return null;
      const { size } = fstatSync(fd);
      const expected = header.dataOffset + 4 * header.vocab * header.rows.reduce((a, b) => a + b, 0);
      if (size !== expected) return null;
      return fileReference(path, header);
    } finally {
      closeSync(fd);
    }
  }

  /** Writes a reference (atomically) and returns it as stored. */
  save(key: string, windows: readonly WindowReference[]): ReferenceSource {
    mkdirSync(this.#dir, { recursive: true });
    const vocab = windows[0]?.vocab ?? 0;
    const header: Header = { key, vocab, rows: windows.map((w) => (vocab === 0 ? 0 : w.logits.length / vocab)) };
    const json = Buffer.from(JSON.stringify(header), 'utf8');
    const dataOffset = align4(8 + 4 + json.length);
    const dataBytes = windows.reduce((sum, w) => sum + w.logits.byteLength, 0);
    const bytes = Buffer.alloc(dataOffset + dataBytes);
    bytes.write(MAGIC, 0, 'latin1');
    bytes.writeUInt32LE(json.length, 8);
    json.copy(bytes, 12);
    let offset = dataOffset;
    for (const window of windows) {
      const view = new Float32Array(bytes.buffer, bytes.byteOffset + offset, window.logits.length);
      view.set(window.logits);
      offset += window.logits.byteLength;
    }
    writeFileAtomic(this.path(key), bytes);
    const stored = this.open(key);
    if (stored === null) throw new Error(`the reference just written to ${this.path(key)} cannot be read back`);
    return stored;
  }
}

function align4(n: number): number {
  return (n + 3) & ~3;
}

function readHeader(fd: number, key: string): (Header & { dataOffset: number }) | null {
  const head = Buffer.alloc(12);
  if (readSync(fd, head, 0, 12, 0) !== 12 || head.toString('latin1', 0, 8) !== MAGIC) return null;
  const length = head.readUInt32LE(8);
  if (length > 1 << 26) return null;
  const json = Buffer.alloc(length);
  if (readSync(fd, json, 0, length, 12) !== length) return null;
  let header: unknown;
  try {
    header = JSON.parse(json.toString('utf8'));
  } catch {
    return null;
  }
  const h = header as Partial<Header>;
  if (h.key !== key || !Number.isInteger(h.vocab) || !Array.isArray(h.rows) || !h.rows.every((r) => Number.isInteger(r) && r >= 0)) return null;
  return { key: h.key, vocab: h.vocab!, rows: h.rows, dataOffset: align4(12 + length) };
}

/** Windows read on demand with positional reads: a large model's reference never sits in memory whole. */
function fileReference(path: string, header: Header & { dataOffset: number }): ReferenceSource {
  const offsets: number[] = [];
  let offset = header.dataOffset;
  for (const rows of header.rows) {
    offsets.push(offset);
    offset += 4 * rows * header.vocab;
  }
  return {
    windows: header.rows.length,
    window: async (index) => {
      const rows = header.rows[index];
      if (rows === undefined) throw new RangeError(`the reference has ${header.rows.length} windows, not ${index + 1}`);
      const bytes = Buffer.alloc(4 * rows * header.vocab);
      const fd = openSync(path, 'r');
      try {
        let read = 0;
        while (read < bytes.length) {
          const n = readSync(fd, bytes, read, bytes.length - read, offsets[index]! + read);
          if (n === 0) throw new Error(`${path} ended early (window ${index}); delete it to compute the reference again.`);
          read += n;
        }
      } finally {
        closeSync(fd);
      }
      const logits = new Float32Array(bytes.buffer, bytes.byteOffset, rows * header.vocab).slice();
      return { logits, vocab: header.vocab };
    },
  };
}
