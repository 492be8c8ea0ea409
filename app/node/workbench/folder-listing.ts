import { existsSync, readdirSync, statSync, type Dirent, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, parse, resolve } from 'node:path';
import { ApiError } from '../../protocol/api-error.js';
import type { FolderEntry, FolderListing, ModelSource } from '../../protocol/workbench-api.js';

/**
 * Entries per page: a folder of 100,000 files is listed a page at a time, each saying where it is in
 * the whole (`offset`, `total`), so the browser shows how far it got and asks for the next page.
 */
export const FOLDER_PAGE_ENTRIES = 2000;

/** Sub-folders first, then config.json, then graphs; names in natural order (`model_2` before `model_10`). */
const RANK: Readonly<Record<'directory' | 'config' | 'onnx', number>> = { directory: 0, config: 1, onnx: 2 };
const NAME_ORDER = new Intl.Collator(undefined, { numeric: true });

/** An entry the browser lists, classified from its directory entry alone (a link's target is stat'ed). */
interface Candidate {
  readonly name: string;
  readonly kind: 'directory' | 'config' | 'onnx';
}

/**
 * One page of one folder of the host for the browser's model picker (serve mode has no native
 * dialog): its sub-folders (those that hold a model marked as such) and the files a model is opened
 * by (config.json, *.onnx). Hidden entries are left out. The whole folder is read and sorted from its
 * directory entries (no stat per file, so 100,000 files take a fraction of a second); only the page's
 * sub-folders are looked into. What the host's file system refuses (a folder this user may not read)
 * comes back as an error saying so, never as an empty folder.
 */
export function listFolder(path: string | null, recent: readonly ModelSource[], home: string = homedir(), offset = 0): FolderListing {
  const folder = resolve(path ?? home);
  const stats = statOrUndefined(folder);
  if (stats === undefined) {
    throw new ApiError({ code: 'invalid-input', message: `${folder} does not exist on the host.`, fix: 'Go back up and choose a folder that exists.' });
  }
  if (!stats.isDirectory()) {
    throw new ApiError({ code: 'invalid-input', message: `${folder} is a file, not a folder.`, fix: 'Open it directly with Open, or choose the folder that holds it.' });
  }
  const candidates = readCandidates(folder);
  candidates.sort((a, b) => RANK[a.kind] - RANK[b.kind] || NAME_ORDER.compare(a.name, b.name));
  const start = Math.min(Math.max(0, Math.floor(offset)), candidates.length);
  const entries = candidates.slice(start, start + FOLDER_PAGE_ENTRIES).map((candidate) => entryOf(folder, candidate));
  const root = parse(folder).root;
  return {
    path: folder,
    parent: folder === root ? null : dirname(folder),
    isModel: isModelFolder(folder),
    entries,
    places: places(home, recent),
    truncated: start + entries.length < candidates.length,
    offset: start,
    total: candidates.length,
  };
}

function readCandidates(folder: string): Candidate[] {
  let dirents: Dirent[];
  try {
    dirents = readdirSync(folder, { withFileTypes: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new ApiError({
      code: 'invalid-input',
      message: code === 'EACCES' || code === 'EPERM'
        ? `The host refuses to list ${folder}: permission denied for the user kvscope runs as.`
        : `${folder} could not be listed: ${(error as Error).message}`,
      fix: 'Choose a folder that user can read.',
    });
  }
  const candidates: Candidate[] = [];
  for (const dirent of dirents) {
    if (dirent.name.startsWith('.')) continue;
    const candidate = candidateOf(folder, dirent);
    if (candidate !== null) candidates.push(candidate);
  }
  return candidates;
}

function candidateOf(folder: string, dirent: Dirent): Candidate | null {
  let isDirectory = dirent.isDirectory();
  let isFile = dirent.isFile();
  if (dirent.isSymbolicLink()) {
    // a dangling link or a loop of links is no entry to open (statSync's ELOOP would end the listing)
    const target = statOrUndefined(join(folder, dirent.name));
    isDirectory = target?.isDirectory() === true;
    isFile = target?.isFile() === true;
  }
  if (isDirectory) return { name: dirent.name, kind: 'directory' };
  if (!isFile) return null;
  if (dirent.name === 'config.json') return { name: dirent.name, kind: 'config' };
  if (dirent.name.endsWith('.onnx')) return { name: dirent.name, kind: 'onnx' };
  return null;
}

function entryOf(folder: string, candidate: Candidate): FolderEntry {
  const path = join(folder, candidate.name);
  if (candidate.kind === 'directory') return { name: candidate.name, path, kind: isModelFolder(path) ? 'model' : 'folder' };
  return { name: candidate.name, path, kind: candidate.kind };
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** A folder the workbench can open as it is: config.json beside it, or an onnx/ graph folder. */
function isModelFolder(path: string): boolean {
  return existsSync(join(path, 'config.json')) || existsSync(join(path, 'onnx'));
}

/** Home first, then each recent model folder (once), then the file system's root. */
function places(home: string, recent: readonly ModelSource[]): FolderListing['places'] {
  const seen = new Set<string>();
  const list: { label: string; path: string }[] = [];
  const add = (label: string, path: string): void => {
    if (seen.has(path)) return;
    seen.add(path);
    list.push({ label, path });
  };
  add('Home', home);
  for (const source of recent) if (source.kind === 'folder') add(basename(source.path) || source.path, source.path);
  add('File system root', parse(home).root || '/');
  return list;
}
