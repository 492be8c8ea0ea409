import { statSync } from 'node:fs';
import { readModelFiles, type ModelFiles } from './open-model.js';

interface Cached {
  readonly stamp: string;
  readonly files: ModelFiles;
}

/**
 * Model folders read once (config, generation_config.json, the tokenizer, the graph's header) and kept while their
 * files are unchanged: the run check reads the same model on every keystroke, and a warm worker
 * starts run after run on it. A file edited, replaced or removed is read again (size and mtime of
 * every file read are the key). The last `capacity` models are kept.
 */
export class ModelFilesCache {
  readonly #entries = new Map<string, Cached>();

  constructor(private readonly capacity = 4) {}

  async read(path: string, onnxFile?: string): Promise<ModelFiles> {
    const key = JSON.stringify([path, onnxFile ?? null]);
    const cached = this.#entries.get(key);
    if (cached !== undefined && stampOf(cached.files) === cached.stamp) return cached.files;
    const files = await readModelFiles(path, onnxFile);
    this.#entries.delete(key);
    this.#entries.set(key, { stamp: stampOf(files), files });
    while (this.#entries.size > this.capacity) this.#entries.delete(this.#entries.keys().next().value!);
    return files;
  }

  clear(): void {
    this.#entries.clear();
  }
}

function stampOf(files: ModelFiles): string {
  const folder = files.folder;
  const paths = [folder.configPath, folder.genaiConfigPath, folder.tokenizerPath, folder.tokenizerConfigPath, folder.chatTemplatePath, folder.generationConfigPath, files.onnxPath];
  return paths.map((path) => {
    if (path === null) return '-';
    const stats = statSync(path, { throwIfNoEntry: false });
    return stats === undefined ? 'gone' : `${stats.size}:${stats.mtimeMs}`;
  }).join('|');
}
