import type { SweepIo } from '../sweep-io.js';

/** Folders and UTF-8 files in memory, paths joined with `/`. */
export function memorySweepIo(): SweepIo & { out: string; err: string } {
  const files = new Map<string, string>();
  const folders = new Set<string>();
  const under = (path: string, root: string): boolean => path === root || path.startsWith(root + '/');
  const io = {
    out: '', err: '',
    joinPath: (...parts: string[]) => parts.join('/'),
    readFile: (path: string) => new TextEncoder().encode(io.readTextFile(path)),
    readTextFile: (path: string) => {
      const text = files.get(path);
      if (text === undefined) throw new Error(`${path}: no such file`);
      return text;
    },
    isDirectory: (path: string) => folders.has(path),
    writeFileAtomic: (path: string, bytes: Uint8Array) => void files.set(path, new TextDecoder().decode(bytes)),
    exists: (path: string) => files.has(path) || folders.has(path),
    listDirectory: (path: string) => [...files.keys(), ...folders]
      .filter((entry) => entry.startsWith(path + '/') && !entry.slice(path.length + 1).includes('/'))
      .map((entry) => entry.slice(path.length + 1)),
    makeDirectory: (path: string) => {
      const parts = path.split('/');
      for (let i = 1; i <= parts.length; i++) folders.add(parts.slice(0, i).join('/'));
    },
    rename: (from: string, to: string) => {
      for (const [path, text] of [...files]) if (under(path, from)) { files.delete(path); files.set(to + path.slice(from.length), text); }
      for (const path of [...folders]) if (under(path, from)) { folders.delete(path); folders.add(to + path.slice(from.length)); }
    },
    remove: (path: string) => {
      for (const file of [...files.keys()]) if (under(file, path)) files.delete(file);
      for (const folder of [...folders]) if (under(folder, path)) folders.delete(folder);
    },
    copyDirectory: (from: string, to: string) => {
      for (const [path, text] of [...files]) if (under(path, from)) files.set(to + path.slice(from.length), text);
      for (const path of [...folders]) if (under(path, from)) folders.add(to + path.slice(from.length));
    },
    stdout: (text: string) => void (io.out += text),
    stderr: (text: string) => void (io.err += text),
  };
  return io;
}
