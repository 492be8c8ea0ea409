import { constants as fsConstants, existsSync, readFileSync } from 'node:fs';
import { copyFile, link, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, normalize, resolve, sep } from 'node:path';
import { performance } from 'node:perf_hooks';
import { decodeModel, encodeModel, type ModelProto } from '../../onnx/onnx-model.js';
import { rewriteForInGraphDequantize } from '../../onnx/rewrite/in-graph-dequantize.js';
import { IN_GRAPH_REWRITE_VERSION, type InGraphDequantizeSpec, type InGraphKvIo } from '../../onnx/rewrite/in-graph-spec.js';
import { GraphRewriteError } from '../../onnx/rewrite/rewrite-error.js';
import { sha256File, sha256Text } from '../model/file-digest.js';
import { publishFolder } from '../synthetic/publish-folder.js';

/** A rewritten graph on disk, ready for a session. */
export interface InGraphModel {
  /** the rewritten `.onnx`; its external data (if any) resolves through links to the source's files */
  readonly path: string;
  readonly io: InGraphKvIo;
  /** the content key: sha256 of the rewrite version, the source graph's bytes and the spec */
  readonly key: string;
  /** milliseconds the rewrite took in this call; null when the cached file was used */
  readonly builtMs: number | null;
}

interface Manifest {
  readonly key: string;
  readonly version: number;
  readonly sourceSha256: string;
  readonly spec: InGraphDequantizeSpec;
  readonly io: InGraphKvIo;
  readonly modelBytes: number;
}

const MODEL_FILE = 'model.onnx';
const MANIFEST_FILE = 'in-graph.json';

/** `$KVSCOPE_CACHE_DIR/in-graph`, else `~/.cache/kvscope/in-graph` (beside the synthetic models' `models/`). */
export function defaultInGraphCacheDir(): string {
  const root = process.env['KVSCOPE_CACHE_DIR'];
  return join(root !== undefined && root !== '' ? root : join(homedir(), '.cache', 'kvscope'), 'in-graph');
}

/** One build per key per process; concurrent callers share it. */
const pending = new Map<string, Promise<InGraphModel>>();

/**
 * The in-graph dequantization rewrite of `sourcePath` for `spec`, built once and cached by content
 * (STYLE.md §15): `<cacheDir>/<key>/model.onnx`, where the key hashes the rewrite's version, the
 * source graph's bytes and the spec (the settings' shape: backend, bits, axes, group size, dtype,
 * which layers, the unpack strategy; the residual length does not change the graph). Publication is
 * atomic (publishFolder), so concurrent runs, in this process or others, see a whole folder or none.
 * A source with external data keeps it where it is: the folder holds hard links to the data files,
 * under the relative names the graph records, so onnxruntime finds them beside the new graph (it
 * refuses external data whose real path leaves the graph's folder, which rules out symbolic links).
 * Across file systems, where no hard link can be made, the data is copied once (a reflink where the
 * file system has them).
 */
export async function ensureInGraphModel(sourcePath: string, spec: InGraphDequantizeSpec, cacheDir = defaultInGraphCacheDir()): Promise<InGraphModel> {
  const sourceSha256 = await sha256File(sourcePath);
  const key = sha256Text(JSON.stringify({ version: IN_GRAPH_REWRITE_VERSION, sourceSha256, spec }));
  const folder = join(cacheDir, key.slice(0, 32));
  const existing = pending.get(folder);
  if (existing !== undefined) return existing;
  const result = checkOrBuild(sourcePath, sourceSha256, spec, key, folder).finally(() => pending.delete(folder));
  pending.set(folder, result);
  return result;
}

async function checkOrBuild(sourcePath: string, sourceSha256: string, spec: InGraphDequantizeSpec, key: string, folder: string): Promise<InGraphModel> {
  const cached = await readValid(folder, key);
  if (cached !== null) return { path: join(folder, MODEL_FILE), io: cached.io, key, builtMs: null };
  const start = performance.now();
  let built: Manifest | null = null;
  await publishFolder(folder, async (temp) => {
    built = await build(sourcePath, sourceSha256, spec, key, temp);
  }, async (dir) => (await readValid(dir, key)) !== null);
  const manifest = built ?? (await readValid(folder, key));
  if (manifest === null) throw new GraphRewriteError(`the rewritten graph in ${folder} is incomplete.`, 'Remove that folder and run again.');
  return { path: join(folder, MODEL_FILE), io: manifest.io, key, builtMs: performance.now() - start };
}

async function build(sourcePath: string, sourceSha256: string, spec: InGraphDequantizeSpec, key: string, dir: string): Promise<Manifest> {
  const source = decodeModel(readFileSync(sourcePath), sourcePath);
  const { model, io } = rewriteForInGraphDequantize(source, spec);
  const bytes = encodeModel(model);
  await writeFile(join(dir, MODEL_FILE), bytes);
  await linkExternalData(model, dirname(resolve(sourcePath)), dir);
  const manifest: Manifest = { key, version: IN_GRAPH_REWRITE_VERSION, sourceSha256, spec, io, modelBytes: bytes.byteLength };
  await writeFile(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** Hard-links (or copies) every external data file the graph names into `dir`, at the same relative path. */
export async function linkExternalData(model: ModelProto, sourceDir: string, dir: string): Promise<void> {
  const locations = new Set<string>();
  for (const tensor of model.graph?.initializer ?? []) {
    const location = tensor.externalData.find((entry) => entry.key === 'location')?.value;
    if (location !== undefined) locations.add(location);
  }
  for (const location of locations) {
    const relative = normalize(location);
    if (isAbsolute(relative) || relative.split(sep).includes('..')) {
      throw new GraphRewriteError(`the graph's external data location ${JSON.stringify(location)} leaves its folder.`,
        'Use a model whose external data files sit beside (or below) the .onnx file, as exporters write them.');
    }
    const target = join(sourceDir, relative);
    if (!existsSync(target)) {
      throw new GraphRewriteError(`the graph's external data file ${target} is missing.`, 'Download the external data file(s) into the same folder as the .onnx file.');
    }
    const copy = join(dir, relative);
    await mkdir(dirname(copy), { recursive: true });
    try {
      await link(target, copy);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK') throw error;
      await copyFile(target, copy, fsConstants.COPYFILE_FICLONE);
    }
  }
}

async function readValid(folder: string, key: string): Promise<Manifest | null> {
  try {
    const manifest = JSON.parse(await readFile(join(folder, MANIFEST_FILE), 'utf8')) as Manifest;
    if (manifest.key !== key || manifest.version !== IN_GRAPH_REWRITE_VERSION) return null;
    // Published atomically (publishFolder), so a folder with its manifest is whole; the size guards against hand edits.
    return (await stat(join(folder, MODEL_FILE))).size === manifest.modelBytes ? manifest : null;
  } catch {
    return null;
  }
}
