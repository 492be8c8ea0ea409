import { existsSync, readdirSync, statSync, type Dirent } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, parse, resolve } from 'node:path';
import { ApiError } from '../../protocol/api-error.js';
import type { FolderEntry, FolderListing, ModelSource } from '../../protocol/workbench-api.js';

/** Entries listed at most: a folder of 100,000 files is listed in part, and says so. */
export const MAX_FOLDER_ENTRIES = 2000;

/**
 * One folder of the host for the browser's model picker (serve mode has no native dialog): its
 * sub-folders (those that hold a model marked as such) and the files a model is opened by
 * (config.json, *.onnx). Hidden entries are left out. What the host's file system refuses (a folder
 * this user may not read) comes back as an error saying so, never as an empty folder.
 */
export function listFolder(path: string | null, recent: readonly ModelSource[], home: string = homedir()): FolderListing {
  const folder = resolve(path ?? home);
  const stats = statSync(folder, { throwIfNoEntry: false });
  if (stats === undefined) {
    throw new ApiError({ code: 'invalid-input', message: `${folder} does not exist on the host.`, fix: 'Go back up and choose a folder that exists.' });
  }
  if (!stats.isDirectory()) {
    throw new ApiError({ code: 'invalid-input', message: `${folder} is a file, not a folder.`, fix: 'Open it directly with Open, or choose the folder that holds it.' });
  }
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
  const entries: FolderEntry[] = [];
  let truncated = false;
  for (const dirent of dirents) {
    if (dirent.name.startsWith('.')) continue;
    if (entries.length >= MAX_FOLDER_ENTRIES) {
      truncated = true;
      break;
    }
    const entry = entryOf(folder, dirent);
    if (entry !== null) entries.push(entry);
  }
  const rank = { model: 0, folder: 0, config: 1, onnx: 2 } as const;
  entries.sort((a, b) => rank[a.kind] - rank[b.kind] || a.name.localeCompare(b.name, undefined, { numeric: true }));
  const root = parse(folder).root;
  return {
    path: folder,
    parent: folder === root ? null : dirname(folder),
    isModel: isModelFolder(folder),
    entries,
    places: places(home, recent),
    truncated,
  };
}

function entryOf(folder: string, dirent: Dirent): FolderEntry | null {
  const path = join(folder, dirent.name);
  let isDirectory = dirent.isDirectory();
  let isFile = dirent.isFile();
  if (dirent.isSymbolicLink()) {
    const target = statSync(path, { throwIfNoEntry: false });
    isDirectory = target?.isDirectory() === true;
    isFile = target?.isFile() === true;
  }
  if (isDirectory) return { name: dirent.name, path, kind: isModelFolder(path) ? 'model' : 'folder' };
  if (!isFile) return null;
  if (dirent.name === 'config.json') return { name: dirent.name, path, kind: 'config' };
  if (dirent.name.endsWith('.onnx')) return { name: dirent.name, path, kind: 'onnx' };
  return null;
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
