import { createHash } from 'node:crypto';
import { mkdir, open, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { readGuardedText } from '../files/guarded-read.js';
import type { StreamedContent, SyntheticModelFolder } from '../../synthetic/synthetic-model.js';
import { sha256File, sha256Text } from '../model/file-digest.js';

/** Written last into a model folder: its presence means every file before it was written. */
export const MANIFEST_NAME = 'kvscope-synthetic.json';

interface ManifestEntry {
  readonly bytes: number;
  readonly sha256: string;
}

export interface FolderManifest {
  readonly kind: string;
  readonly format_version: number;
  /** sha256 of the `sha256sum`-style listing of the files, sorted by path: one hash for the whole folder */
  readonly content_sha256: string;
  readonly files: Readonly<Record<string, ManifestEntry>>;
}

export type FolderCheck = { readonly ok: true; readonly manifest: FolderManifest } | { readonly ok: false; readonly reason: string };

/** Writes the files, then the manifest with each file's size and sha256. */
export async function writeModelFolder(dir: string, folder: SyntheticModelFolder): Promise<FolderManifest> {
  const files: Record<string, ManifestEntry> = {};
  for (const file of folder.files) {
    const path = join(dir, ...file.path.split('/'));
    await mkdir(dirname(path), { recursive: true });
    const content = file.content;
    if (typeof content === 'string' || content instanceof Uint8Array) {
      await writeFile(path, content);
      files[file.path] = { bytes: byteLength(content), sha256: sha256Text(content) };
    } else {
      files[file.path] = await writeStreamed(path, content);
    }
  }
  const manifest: FolderManifest = { kind: folder.kind, format_version: folder.formatVersion, content_sha256: contentHash(files), files };
  await writeFile(join(dir, MANIFEST_NAME), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/**
 * Whether `dir` holds exactly this model: the manifest names this kind and format version and lists
 * `allPaths`; the JSON files the current generator writes (`expected`, cheap to build) hash as the manifest says, which
 * catches a folder from an older generator; and every file on disk has the manifest's size and
 * sha256, which catches a half-written or damaged folder.
 */
export async function checkModelFolder(dir: string, expected: SyntheticModelFolder, allPaths: readonly string[]): Promise<FolderCheck> {
  let manifest: FolderManifest;
  try {
    manifest = JSON.parse(await readGuardedText(join(dir, MANIFEST_NAME), 'manifest')) as FolderManifest;
  } catch (error) {
    return { ok: false, reason: `no readable ${MANIFEST_NAME} (${(error as Error).message})` };
  }
  if (manifest.kind !== expected.kind || manifest.format_version !== expected.formatVersion) {
    return { ok: false, reason: `manifest is for ${manifest.kind} v${manifest.format_version}, expected ${expected.kind} v${expected.formatVersion}` };
  }
  const entries = manifest.files ?? {};
  if (manifest.content_sha256 !== contentHash(entries)) return { ok: false, reason: 'manifest content_sha256 does not match its file list' };
  const listed = Object.keys(entries).sort().join(', ');
  if (listed !== [...allPaths].sort().join(', ')) return { ok: false, reason: `manifest lists ${listed}, expected ${[...allPaths].sort().join(', ')}` };
  for (const file of expected.files) {
    if (typeof file.content !== 'string' && !(file.content instanceof Uint8Array)) continue; // streamed: checked on disk below
    if (entries[file.path]?.sha256 !== sha256Text(file.content)) return { ok: false, reason: `${file.path} is not what this kvscope generates (stale folder)` };
  }
  for (const [path, entry] of Object.entries(entries)) {
    const onDisk = join(dir, ...path.split('/'));
    try {
      if ((await stat(onDisk)).size !== entry.bytes) return { ok: false, reason: `${path} has the wrong size (half-written?)` };
      if ((await sha256File(onDisk)) !== entry.sha256) return { ok: false, reason: `${path} does not match its sha256 (damaged)` };
    } catch (error) {
      return { ok: false, reason: `${path}: ${(error as Error).message}` };
    }
  }
  return { ok: true, manifest };
}

/** The folder's identity: sha256 over `<sha256>  <path>` lines sorted by path. */
export function contentHash(files: Readonly<Record<string, ManifestEntry>>): string {
  const listing = Object.keys(files).sort().map((path) => `${files[path]?.sha256}  ${path}\n`).join('');
  return sha256Text(listing);
}

/** Writes a streamed file chunk by chunk (each chunk is the generator's reused buffer), hashing as it goes. */
async function writeStreamed(path: string, content: StreamedContent): Promise<ManifestEntry> {
  const hash = createHash('sha256');
  const handle = await open(path, 'w');
  let bytes = 0;
  try {
    for (const chunk of content.chunks()) {
      hash.update(chunk);
      for (let written = 0; written < chunk.byteLength;) {
        written += (await handle.write(chunk, written, chunk.byteLength - written)).bytesWritten;
      }
      bytes += chunk.byteLength;
    }
  } finally {
    await handle.close();
  }
  if (bytes !== content.bytes) throw new RangeError(`${path}: ${bytes} bytes written, ${content.bytes} announced (a generator bug)`);
  return { bytes, sha256: hash.digest('hex') };
}

function byteLength(content: string | Uint8Array): number {
  return typeof content === 'string' ? Buffer.byteLength(content, 'utf8') : content.byteLength;
}
