import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { writeFileAtomic } from '../atomic-write.js';
import type { WindowReference } from '../../lab/reference-source.js';

/**
 * One window of a stored reference, one file: 8 bytes `KVSRW002`, a uint32 (little-endian) header
 * length, the header as UTF-8 JSON, zero padding to a multiple of 4, then the payload:
 * `[rows, vocab]` float32 logits, little-endian (`encoding: "float32-logits"`).
 * The header carries the payload's sha256, checked on every read (issue 24): a file whose floats were
 * changed, or set to NaN, while its size was kept is caught, not trusted. Written atomically (temp
 * file, fsync, rename), so a window file is whole or absent.
 */
const MAGIC = 'KVSRW002';
const ENCODING = 'float32-logits';
/** a header is a few hundred bytes; anything larger is not one of ours */
const MAX_HEADER_BYTES = 1 << 16;

interface WindowHeader {
  readonly encoding: typeof ENCODING;
  /** the reference's content key and the window's index: a file moved under another name is caught */
  readonly key: string;
  readonly index: number;
  readonly rows: number;
  readonly vocab: number;
  /** payload bytes: 4 · rows · vocab */
  readonly bytes: number;
  /** sha256 of the payload, hex */
  readonly sha256: string;
}

/** Writes one window (atomically); returns the file's size in bytes. */
export function writeWindowFile(path: string, key: string, index: number, window: WindowReference): number {
  const rows = window.vocab === 0 ? 0 : window.logits.length / window.vocab;
  const payload = new Uint8Array(window.logits.buffer, window.logits.byteOffset, window.logits.byteLength);
  const header: WindowHeader = {
    encoding: ENCODING, key, index, rows, vocab: window.vocab, bytes: payload.byteLength,
    sha256: createHash('sha256').update(payload).digest('hex'),
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const head = Buffer.alloc(align4(12 + json.length));
  head.write(MAGIC, 0, 'latin1');
  head.writeUInt32LE(json.length, 8);
  json.copy(head, 12);
  writeFileAtomic(path, [head, payload]);
  return head.length + payload.byteLength;
}

/** A window read back and verified, or why it cannot be used (the caller discards it and computes it again). */
export type WindowRead =
  | { readonly ok: true; readonly window: WindowReference }
  | { readonly ok: false; readonly reason: string };

/**
 * Reads and verifies one window file: magic, header, key and index, size, and the payload's sha256.
 * `expectedRows`: the rows the window scores (a file of another shape is refused).
 */
export function readWindowFile(path: string, key: string, index: number, expectedRows: number): WindowRead {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return { ok: false, reason: 'missing' };
  }
  try {
    const head = Buffer.alloc(12);
    if (readSync(fd, head, 0, 12, 0) !== 12 || head.toString('latin1', 0, 8) !== MAGIC) return { ok: false, reason: 'not a kvscope reference window' };
    const length = head.readUInt32LE(8);
    if (length > MAX_HEADER_BYTES) return { ok: false, reason: 'its header is damaged' };
    const json = Buffer.alloc(length);
    if (readSync(fd, json, 0, length, 12) !== length) return { ok: false, reason: 'its header is cut short' };
    const header = parseHeader(json);
    if (header === null) return { ok: false, reason: 'its header is damaged' };
    if (header.key !== key || header.index !== index) return { ok: false, reason: 'it belongs to another reference' };
    if (header.rows !== expectedRows) return { ok: false, reason: `it holds ${header.rows} rows, not the ${expectedRows} this window scores` };
    const dataOffset = align4(12 + length);
    if (fstatSync(fd).size !== dataOffset + header.bytes) return { ok: false, reason: 'its size does not match its header' };
    // Its own ArrayBuffer (allocUnsafeSlow: not the shared pool), so the floats are a view, not a copy.
    const payload = Buffer.allocUnsafeSlow(header.bytes);
    let read = 0;
    while (read < payload.length) {
      const n = readSync(fd, payload, read, payload.length - read, dataOffset + read);
      if (n === 0) return { ok: false, reason: 'it ends early' };
      read += n;
    }
    if (createHash('sha256').update(payload).digest('hex') !== header.sha256) return { ok: false, reason: 'its content does not match its sha256 (the file was changed or damaged)' };
    return { ok: true, window: { logits: new Float32Array(payload.buffer, payload.byteOffset, header.rows * header.vocab), vocab: header.vocab } };
  } finally {
    closeSync(fd);
  }
}

function parseHeader(json: Buffer): WindowHeader | null {
  let value: unknown;
  try {
    value = JSON.parse(json.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const h = value as Partial<WindowHeader>;
  const count = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;
  if (h.encoding !== ENCODING || typeof h.key !== 'string' || typeof h.sha256 !== 'string') return null;
  if (!count(h.index) || !count(h.rows) || !count(h.vocab) || !count(h.bytes) || h.bytes !== 4 * h.rows * h.vocab) return null;
  return h as WindowHeader;
}

function align4(n: number): number {
  return (n + 3) & ~3;
}
