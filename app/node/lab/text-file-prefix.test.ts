import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readFilePrefixSync } from '../files/file-prefix.js';
import { wholeCharacters } from '../../lab/eval-text-bytes.js';
import { moreOfTextFile } from './text-file-prefix.js';

const dir = mkdtempSync(join(tmpdir(), 'kvscope-text-prefix-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a text file read from its start', () => {
  it('reads twice as much each time, never ending inside a character, then the whole file, then nothing', () => {
    const text = 'Größe € 𝄞 '.repeat(500);
    const path = join(dir, 'text.txt');
    writeFileSync(path, text);
    const prefix = readFilePrefixSync(path, 100, 'input');
    expect(prefix.size).toBe(Buffer.byteLength(text));
    expect(prefix.bytes.length).toBe(100);
    const start = wholeCharacters(prefix.bytes);
    expect(text.startsWith(Buffer.from(start).toString('utf8'))).toBe(true);
    const more = moreOfTextFile({ path, bytes: prefix.size, sha256: prefix.sha256, prefixBytes: start.length });
    const reads: string[] = [];
    for (let next = more(); next !== null; next = more()) reads.push(next);
    for (const read of reads) expect(text.startsWith(read)).toBe(true);
    for (let i = 1; i < reads.length; i++) expect(reads[i]!.length).toBeGreaterThan(reads[i - 1]!.length);
    expect(reads.at(-1)).toBe(text);
  });

  it('hashes the whole file, not the start it returns', () => {
    const path = join(dir, 'big.txt');
    writeFileSync(path, 'a'.repeat(3 << 20));
    const prefix = readFilePrefixSync(path, 10, 'input');
    expect(prefix.bytes.length).toBe(10);
    expect(prefix.sha256).toBe(createHash('sha256').update('a'.repeat(3 << 20)).digest('hex'));
  });
});
