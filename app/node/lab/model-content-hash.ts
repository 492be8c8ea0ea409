import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { sha256File, sha256Text } from '../model/file-digest.js';
import { EvalInputError } from '../../lab/lab-errors.js';
import type { ModelFiles } from '../model/open-model.js';
import { externalDataFiles } from './external-data.js';

/** What determines a model's logits, file by file: the graph, its external data, config, tokenizer, generation config. */
export interface ModelContent {
  /** sha256 over the names and digests below, hex */
  readonly sha256: string;
  readonly files: readonly { readonly role: string; readonly name: string; readonly sha256: string }[];
}

/**
 * The content hash of everything a model's logits and tokens depend on (seams.md "Records keyed by
 * content"): the .onnx graph and every external data file it names, config.json, tokenizer.json and
 * tokenizer_config.json, generation_config.json (BOS and EOS ids). Files are hashed by content
 * (app/node/model/file-digest.ts caches digests by size and mtime), so a copied folder hashes the same.
 */
export async function modelContentHash(files: ModelFiles): Promise<ModelContent> {
  const entries: { role: string; name: string; sha256: string }[] = [];
  entries.push({ role: 'graph', name: basename(files.onnxPath), sha256: await sha256File(files.onnxPath) });
  const graphFolder = dirname(files.onnxPath);
  for (const name of externalDataFiles(files.onnxPath)) {
    const path = join(graphFolder, name);
    if (!existsSync(path)) {
      throw new EvalInputError(`${basename(files.onnxPath)} keeps weights in ${name}, which is missing beside it.`, 'Download the external data file into the same folder as the graph.');
    }
    entries.push({ role: 'external-data', name, sha256: await sha256File(path) });
  }
  entries.push({ role: 'config', name: 'config.json', sha256: sha256Text(files.configBytes) });
  const folder = files.folder;
  for (const [role, path] of [['tokenizer', folder.tokenizerPath], ['tokenizer-config', folder.tokenizerConfigPath], ['generation-config', folder.generationConfigPath]] as const) {
    if (path !== null) entries.push({ role, name: basename(path), sha256: await sha256File(path) });
  }
  return { sha256: sha256Text(JSON.stringify(entries)), files: entries };
}
