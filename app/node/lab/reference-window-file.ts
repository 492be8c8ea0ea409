import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { writeFileAtomic } from '../atomic-write.js';
import type { WindowReference } from '../../lab/reference-source.js';

/**
 * One window of a stored reference, one file: 8 bytes `KVSRW002`, a uint32 (little-endian) header
 * length, the header as UTF-8 JSON, zero padding to a multiple of 4, then the payload, little-endian:
 * `float32-logits`: `[rows, vocab]` float32 logits; `float32-hidden`: `[rows, hiddenSize]` float32
 * final hidden states, from which the LM head recomputes the logits, and `logitsSha256`, the sha256
 * of the scored rows' logits (the full graph's; where the pass computed two rows only, the head's,
 * checked against the graph's last scored row), which the recomputed ones must match bit for bit
 * (stored-reference.ts).
 * The header carries the payload's sha256, checked on every read (issue 24): a file whose floats were
 * changed, or set to NaN, while its size was kept is caught, not trusted. Written atomically (temp
 * file, fsync, rename), so a window file is whole or absent.
 */
const MAGIC = 'KVSRW002';
const ENCODINGS = ['float32-logits', 'float32-hidden'] as const;
type Encoding = (typeof ENCODINGS)[number];
/** a header is a few hundred bytes; anything larger is not one of ours */
const MAX_HEADER_BYTES = 1 << 16;

interface WindowHeader {
  readonly encoding: Encoding;
  /** the reference's content key and the window's index: a file moved under another name is caught */
  readonly key: string;
  readonly index: number;
  readonly rows: number;
  readonly vocab: number;
  /** floats per row: vocab (logits) or the hidden size */
  readonly width: number;
  /** payload bytes: 4 · rows · width */
  readonly bytes: number;
  /** sha256 of the payload, hex */
  readonly sha256: string;
  /** float32-hidden: sha256 of the `[rows, vocab]` float32 logits the hidden states must give */
  readonly logitsSha256?: string;
}

/** What a window file holds: the logits themselves, or hidden states and the digest of their logits. */
export type StoredWindow =
  | { readonly kind: 'logits'; readonly window: WindowReference }
  | { readonly kind: 'hidden'; readonly hidden: Float32Array; readonly hiddenSize: number; readonly vocab: number; readonly logitsSha256: string };

export function sha256Floats(values: Float32Array): string {
  return createHash('sha256').update(new Uint8Array(values.buffer, values.byteOffset, values.byteLength)).digest('hex');
}

/** Writes one window (atomically); returns the file's size in bytes. */
export function writeWindowFile(path: string, key: string, index: number, stored: StoredWindow): number {
  const [values, width, vocab] = stored.kind === 'logits' ? [stored.window.logits, stored.window.vocab, stored.window.vocab] : [stored.hidden, stored.hiddenSize, stored.vocab];
  const rows = width === 0 ? 0 : values.length / width;
  const payload = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  const header: WindowHeader = {
    encoding: stored.kind === 'logits' ? 'float32-logits' : 'float32-hidden', key, index, rows, vocab, width, bytes: payload.byteLength,
    sha256: sha256Floats(values), ...(stored.kind === 'hidden' ? { logitsSha256: stored.logitsSha256 } : {}),
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
  | { readonly ok: true; readonly stored: StoredWindow }
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
    const values = new Float32Array(payload.buffer, payload.byteOffset, header.rows * header.width);
    return {
      ok: true,
      stored: header.encoding === 'float32-logits'
        ? { kind: 'logits', window: { logits: values, vocab: header.vocab } }
        : { kind: 'hidden', hidden: values, hiddenSize: header.width, vocab: header.vocab, logitsSha256: header.logitsSha256! },
    };
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
  if (!(ENCODINGS as readonly unknown[]).includes(h.encoding) || typeof h.key !== 'string' || typeof h.sha256 !== 'string') return null;
  if (!count(h.index) || !count(h.rows) || !count(h.vocab) || !count(h.width) || !count(h.bytes) || h.bytes !== 4 * h.rows * h.width) return null;
  if (h.encoding === 'float32-logits' ? h.width !== h.vocab : typeof h.logitsSha256 !== 'string') return null;
  return h as WindowHeader;
}

function align4(n: number): number {
  return (n + 3) & ~3;
}
