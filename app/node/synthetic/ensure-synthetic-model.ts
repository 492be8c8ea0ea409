import { existsSync } from 'node:fs';
import { reportCacheRebuild } from '../cache-notice.js';
import { SyntheticModelError } from '../../synthetic/synthetic-model-error.js';
import { buildSyntheticModel, buildSyntheticModelJsonFiles, syntheticModelPaths } from '../../synthetic/synthetic-model.js';
import { SYNTHETIC_MODEL_KINDS, type SyntheticModelKind } from '../../synthetic/synthetic-spec.js';
import { checkModelFolder, writeModelFolder } from './folder-manifest.js';
import { publishFolder } from './publish-folder.js';
import { syntheticModelFolder } from './synthetic-cache-dir.js';

export interface EnsureSyntheticModelOptions {
  /** the directory holding model folders; default `$KVSCOPE_CACHE_DIR/models` or `~/.cache/kvscope/models` */
  readonly cacheDir?: string;
}

/** One check-or-build per folder per process; concurrent callers share it. */
const pending = new Map<string, Promise<string>>();

/**
 * The path of the synthetic model's Hugging Face folder (config.json, generation_config.json,
 * tokenizer.json, tokenizer_config.json, onnx/model.onnx), generated on first use (about 95 MB, a
 * few seconds) and cached as `<cacheDir>/<kind>-v<format version>`. A cached folder is used only if
 * its manifest's content hashes match the files and the current generator (see checkModelFolder:
 * every file's size and sha256, read whole before use, about 1 s per GB here against the seconds
 * a rebuild takes); otherwise it is rebuilt, with one line on stderr saying why. Publication is
 * atomic, so concurrent callers, in this process or others, all get a complete folder.
 */
export async function ensureSyntheticModel(kind: SyntheticModelKind, options: EnsureSyntheticModelOptions = {}): Promise<string> {
  if (!SYNTHETIC_MODEL_KINDS.includes(kind)) {
    throw new SyntheticModelError(`unknown synthetic model "${String(kind)}"; expected one of ${SYNTHETIC_MODEL_KINDS.join(', ')}`);
  }
  const folder = syntheticModelFolder(kind, options.cacheDir);
  const existing = pending.get(folder);
  if (existing !== undefined) return existing;
  const result = checkOrBuild(kind, folder).finally(() => pending.delete(folder));
  pending.set(folder, result);
  return result;
}

async function checkOrBuild(kind: SyntheticModelKind, folder: string): Promise<string> {
  const expected = buildSyntheticModelJsonFiles(kind);
  const allPaths = syntheticModelPaths(kind);
  const isValid = async (dir: string): Promise<boolean> => (await checkModelFolder(dir, expected, allPaths)).ok;
  const check = await checkModelFolder(folder, expected, allPaths);
  if (check.ok) return folder;
  // A first build says nothing; a folder that is there but fails its check is kvscope's cache to repair.
  if (existsSync(folder)) reportCacheRebuild(`the cached synthetic model in ${folder} failed its check (${check.reason}); discarded and rebuilt.`);

  // Either our own complete folder lands there, or another writer's that isValid accepted
  await publishFolder(folder, async (temp) => {
    await writeModelFolder(temp, buildSyntheticModel(kind));
  }, isValid);
  return folder;
}
