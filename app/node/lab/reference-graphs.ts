import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { decodeModel, encodeModel, type ModelProto } from '../../onnx/onnx-model.js';
import { findLmHead, lmHeadModel, withHiddenOutput } from '../../onnx/rewrite/lm-head-split.js';
import { reportCacheRebuild } from '../cache-notice.js';
import { sha256File, sha256Text } from '../model/file-digest.js';
import { dataFileIdentity, sameIdentity, type DataFileIdentity } from '../onnx/data-file-identity.js';
import { checkGraphFile, embeddedInitializers, externalLocations, pointAtSource } from '../onnx/source-backed-graph.js';
import { publishFolder } from '../synthetic/publish-folder.js';
import { kvscopeCacheRoot } from './lab-cache-dir.js';

/** Bumped when the cut or the files change (2: the graphs read the source's weights in place, digests verified). */
const REFERENCE_GRAPHS_VERSION = 2;
const MODEL_FILE = 'model.onnx';
const HEAD_FILE = 'lm-head.onnx';
const MANIFEST_FILE = 'reference-graphs.json';

/** The source graph with its hidden state as an added output, and its LM head alone, on disk. */
export interface ReferenceGraphs {
  /** the source graph plus the output `hidden`: the same logits bit for bit (lm-head-split.ort.test.ts) */
  readonly modelPath: string;
  /** the LM head: input `hidden`, output the logits */
  readonly headPath: string;
  readonly hidden: string;
  /** the source graph's folder, where both graphs read their weights (onnxruntime's external initializers folder) */
  readonly externalDataFolder: string;
}

interface GraphFile {
  readonly bytes: number;
  readonly sha256: string;
}

interface Manifest {
  readonly key: string;
  readonly hidden: string;
  readonly model: GraphFile;
  readonly head: GraphFile;
  /** the source's external data files the graphs read in place, by identity */
  readonly externalData: readonly DataFileIdentity[];
}

/**
 * The graphs of a compact reference (docs/eval-record.md "The compact form, exact"), built once per source
 * graph and cached by content beside the in-graph rewrites: `<root>/reference-graphs/<key>/`. Like the
 * rewrite cache (source-backed-graph.ts) an entry holds no weight bytes: both graphs read them from the
 * source in place. Before use each graph's sha256 and each source data file's identity are checked; a
 * failed check discards the entry, rebuilds it and says so in one line. Returns the reason instead when
 * the head cannot be cut (the reference then keeps float32 logits).
 */
export async function ensureReferenceGraphs(sourcePath: string, logitsName: string, cacheDir = join(kvscopeCacheRoot(), 'reference-graphs')): Promise<ReferenceGraphs | { readonly reason: string }> {
  const absolute = resolve(sourcePath);
  const sourceDir = dirname(absolute);
  const key = sha256Text(JSON.stringify({ version: REFERENCE_GRAPHS_VERSION, source: await sha256File(absolute), logitsName }));
  const folder = join(cacheDir, key.slice(0, 32));
  const result = (manifest: Manifest): ReferenceGraphs =>
    ({ modelPath: join(folder, MODEL_FILE), headPath: join(folder, HEAD_FILE), hidden: manifest.hidden, externalDataFolder: sourceDir });
  const cached = await verify(folder, key, sourceDir);
  if (cached.ok) return result(cached.manifest);
  if (cached.present) reportCacheRebuild(`the cached reference graphs in ${folder} ${cached.reason}; discarded and rebuilt.`);
  const sourceBytes = readFileSync(absolute);
  const source = decodeModel(sourceBytes, absolute);
  const head = findLmHead(source, logitsName);
  if ('reason' in head) return head;
  const inPlace = embeddedInitializers(source, sourceBytes);
  const sourceFile = basename(absolute);
  let built: Manifest | null = null;
  await publishFolder(folder, async (temp) => {
    const write = async (file: string, model: ModelProto): Promise<GraphFile> => {
      pointAtSource(model, inPlace, sourceFile);
      const bytes = encodeModel(model);
      await writeFile(join(temp, file), bytes);
      return { bytes: bytes.byteLength, sha256: sha256Text(bytes) };
    };
    const model = withHiddenOutput(source, head);
    const headModel = lmHeadModel(source, head);
    const graphs = { model: await write(MODEL_FILE, model), head: await write(HEAD_FILE, headModel) };
    const locations = new Set([...externalLocations(model, sourceFile), ...externalLocations(headModel, sourceFile)]);
    const externalData = await Promise.all([...locations].sort().map((location) => dataFileIdentity(sourceDir, location)));
    built = { key, hidden: head.hidden, ...graphs, externalData };
    await writeFile(join(temp, MANIFEST_FILE), `${JSON.stringify(built, null, 2)}\n`);
  }, async (dir) => (await verify(dir, key, sourceDir)).ok);
  const published = await verify(folder, key, sourceDir);
  const manifest = published.ok ? published.manifest : built;
  if (manifest === null) return { reason: `the reference graphs in ${folder} could not be verified after they were written` };
  return result(manifest);
}

type EntryCheck = { readonly ok: true; readonly manifest: Manifest } | { readonly ok: false; readonly present: boolean; readonly reason: string };

async function verify(folder: string, key: string, sourceDir: string): Promise<EntryCheck> {
  let text: string;
  try {
    text = await readFile(join(folder, MANIFEST_FILE), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, present: code !== 'ENOENT', reason: `has no readable ${MANIFEST_FILE}` };
  }
  let manifest: Manifest;
  try {
    manifest = JSON.parse(text) as Manifest;
  } catch {
    return { ok: false, present: true, reason: `has an ${MANIFEST_FILE} that is not valid JSON (damaged)` };
  }
  if (manifest === null || typeof manifest !== 'object' || manifest.key !== key || !Array.isArray(manifest.externalData)
    || typeof manifest.model !== 'object' || typeof manifest.head !== 'object') {
    return { ok: false, present: true, reason: `has a ${MANIFEST_FILE} for another key or format` };
  }
  for (const [file, expected] of [[MODEL_FILE, manifest.model], [HEAD_FILE, manifest.head]] as const) {
    const fault = await checkGraphFile(join(folder, file), expected.bytes, expected.sha256);
    if (fault !== null) return { ok: false, present: true, reason: fault };
  }
  for (const recorded of manifest.externalData) {
    const now = await dataFileIdentity(sourceDir, recorded.location).catch(() => null);
    if (now === null || !sameIdentity(now, recorded)) {
      return { ok: false, present: true, reason: `was built against another ${recorded.location} (size, modification time or sampled sha256 differ)` };
    }
  }
  return { ok: true, manifest };
}
