import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { decodeModel, encodeModel } from '../../onnx/onnx-model.js';
import { rewriteForInGraphDequantize } from '../../onnx/rewrite/in-graph-dequantize.js';
import { findLmHead, withHeadInput } from '../../onnx/rewrite/lm-head-split.js';
import { keepLogitsRows, LOGITS_ROWS_REWRITE_VERSION } from '../../onnx/rewrite/logits-rows.js';
import type { HeadInput } from '../../lab/model-head.js';
import { IN_GRAPH_REWRITE_VERSION, type InGraphDequantizeSpec, type InGraphKvIo } from '../../onnx/rewrite/in-graph-spec.js';
import { GraphRewriteError } from '../../onnx/rewrite/rewrite-error.js';
import { sha256File, sha256Text } from '../model/file-digest.js';
import { publishFolder } from '../synthetic/publish-folder.js';
import { reportCacheRebuild } from '../cache-notice.js';
import { dataFileIdentity, sameIdentity, type DataFileIdentity } from './data-file-identity.js';
import { checkGraphFile, embeddedInitializers, externalLocations, pointAtSource } from './source-backed-graph.js';

/** A graph derived from a source graph, on disk, ready for a session. */
export interface DerivedGraph {
  /** the derived `.onnx`: the graph alone; every weight stays in the source's files */
  readonly path: string;
  /**
   * the folder its weights are read from (the source graph's), to give onnxruntime as
   * `session.model_external_initializers_file_folder_path`; the cache entry holds no weight bytes
   */
  readonly externalDataFolder: string;
  /** the content key: sha256 of the rewrites' versions, the source graph's bytes and what was derived */
  readonly key: string;
  /** milliseconds the rewrite took in this call; null when the cached file was used */
  readonly builtMs: number | null;
  /** why a cached entry was discarded and built again in this call (one line), or null */
  readonly rebuiltBecause: string | null;
}

/** A rewritten graph on disk for in-graph dequantization, ready for a session. */
export interface InGraphModel extends DerivedGraph {
  readonly io: InGraphKvIo;
  /** the head input (withHeadInput) when the rewrite was asked for one: an evaluation's compact reference read on this graph */
  readonly headInput: HeadInput | null;
  /** the graph also takes num_logits_to_keep (keepLogitsRows composed into the same graph) */
  readonly logitsRows: boolean;
}

/**
 * What one derived graph is, composed in this order into one graph: the in-graph dequantization
 * rewrite (when `spec`), the logits-rows rewrite (keepLogitsRows), an LM head input (withHeadInput).
 */
interface Derivation {
  readonly spec: InGraphDequantizeSpec | null;
  /** the logits output whose rows keepLogitsRows cuts, or null: every row */
  readonly logitsRows: string | null;
  readonly headLogits: string | null;
}

interface Manifest {
  readonly key: string;
  readonly version: number;
  readonly cacheFormat: number;
  readonly sourceSha256: string;
  /** null: no in-graph dequantization (the logits-rows rewrite alone) */
  readonly spec: InGraphDequantizeSpec | null;
  readonly io: InGraphKvIo | null;
  readonly headInput: HeadInput | null;
  /** absent in entries written before the logits-rows rewrite was composed in: false */
  readonly logitsRows?: boolean;
  /** the rewritten graph's size and sha256, checked before every use */
  readonly modelBytes: number;
  readonly modelSha256: string;
  /** the source's external data files the graph reads in place (relative to the source graph's folder), by identity */
  readonly externalData: readonly DataFileIdentity[];
}

/** Bumped when the entry's layout changes (2: weights referenced in place, graph digest in the manifest). */
const CACHE_FORMAT = 2;
const MODEL_FILE = 'model.onnx';
const MANIFEST_FILE = 'in-graph.json';

/** `$KVSCOPE_CACHE_DIR/in-graph`, else `~/.cache/kvscope/in-graph` (beside the synthetic models' `models/`). */
export function defaultInGraphCacheDir(): string {
  const root = process.env['KVSCOPE_CACHE_DIR'];
  return join(root !== undefined && root !== '' ? root : join(homedir(), '.cache', 'kvscope'), 'in-graph');
}

/** onnxruntime session options (`extra`) that let a rewritten graph read its weights from the source's folder. */
export function inGraphSessionConfig(model: Pick<InGraphModel, 'externalDataFolder'>): Record<string, string> {
  // onnxruntime_session_options_config_keys.h: kOrtSessionOptionsModelExternalInitializersFileFolderPath.
  // ORT refuses absolute or escaping `location`s (and symbolic links out of the graph's folder); this
  // key moves the folder relative locations resolve against, so the graph can sit elsewhere.
  return { model_external_initializers_file_folder_path: model.externalDataFolder };
}

/** One build per key per process; concurrent callers share it. */
const pending = new Map<string, Promise<{ readonly entry: DerivedGraph; readonly manifest: Manifest }>>();

/**
 * The in-graph dequantization rewrite of `sourcePath` for `spec`, built once and cached by content
 * (STYLE.md §15): `<cacheDir>/<key>/model.onnx`, where the key hashes the rewrite's version, the
 * source graph's bytes and the spec (the settings' shape: backend, bits, axes, group size, dtype,
 * which layers, the unpack strategy; the residual length does not change the graph). Publication is
 * atomic (publishFolder), so concurrent runs, in this process or others, see a whole folder or none.
 * `logitsRows` (the logits output's name) composes keepLogitsRows into the same graph (a run on a graph without
 * num_logits_to_keep computes one logits row per step: one derived graph, not two).
 *
 * The entry never holds weights (issue 23): initializers stored in the source graph point back at
 * their bytes inside the source `.onnx` (external data with the offset protobuf gave them), and
 * external data files are read where they are, through inGraphSessionConfig. So nothing is linked or
 * copied, on one file system or across two. Before use the entry is verified: the rewritten graph's
 * sha256 (a graph without weights: kilobytes to a few MB, well under a millisecond per MB) and each
 * source data file's identity (dataFileIdentity); a mismatch discards the entry, rebuilds it and
 * says so in one line.
 */
export async function ensureInGraphModel(
  sourcePath: string, spec: InGraphDequantizeSpec, cacheDir = defaultInGraphCacheDir(),
  options: { readonly headLogits?: string; readonly logitsRows?: string } = {},
): Promise<InGraphModel> {
  const { entry, manifest } = await ensureDerived(sourcePath, { spec, logitsRows: options.logitsRows ?? null, headLogits: options.headLogits ?? null }, cacheDir);
  return { ...entry, io: manifest.io!, headInput: manifest.headInput ?? null, logitsRows: manifest.logitsRows === true };
}

/**
 * The source graph with keepLogitsRows applied (a `num_logits_to_keep` input: the prefill and every
 * step compute the last row's logits only), cached exactly as the in-graph rewrite is, in the same
 * cache. Throws GraphRewriteError when the LM head is not found (callers decide that from the
 * header first: app/model-layout/logits-rows-support.ts).
 */
export async function ensureLogitsRowsModel(sourcePath: string, cacheDir = defaultInGraphCacheDir(), logitsName = 'logits'): Promise<DerivedGraph> {
  return (await ensureDerived(sourcePath, { spec: null, logitsRows: logitsName, headLogits: null }, cacheDir)).entry;
}

/**
 * The source graph itself, its weights stored inside the `.onnx` read in place (issue 23): every
 * initializer of IN_PLACE_MIN_BYTES or more becomes external data pointing at its bytes inside the
 * source file, so onnxruntime memory-maps them (one set of page-cache pages for every session and
 * process) where a session of the source graph parses them into memory of its own, once per session.
 * The same graph otherwise, node for node: the same logits bit for bit at the same prepacking
 * setting (in-place-graph.ort.test.ts). Cached as the other derived graphs are.
 */
export async function ensureInPlaceModel(sourcePath: string, cacheDir = defaultInGraphCacheDir()): Promise<DerivedGraph> {
  return (await ensureDerived(sourcePath, { spec: null, logitsRows: null, headLogits: null }, cacheDir)).entry;
}

async function ensureDerived(sourcePath: string, derivation: Derivation, cacheDir: string): Promise<{ readonly entry: DerivedGraph; readonly manifest: Manifest }> {
  const sourceSha256 = await sha256File(sourcePath);
  const { spec, logitsRows, headLogits } = derivation;
  // Without a head input or the logits rows the key is the one earlier versions computed, so existing entries stay valid.
  const key = sha256Text(JSON.stringify({
    version: IN_GRAPH_REWRITE_VERSION, cacheFormat: CACHE_FORMAT, sourceSha256, spec,
    ...(headLogits === null ? {} : { headLogits }), ...(logitsRows === null ? {} : { logitsRows: { version: LOGITS_ROWS_REWRITE_VERSION, logits: logitsRows } }),
  }));
  const folder = join(cacheDir, key.slice(0, 32));
  const existing = pending.get(folder);
  if (existing !== undefined) return existing;
  const result = checkOrBuild(resolve(sourcePath), sourceSha256, derivation, key, folder).finally(() => pending.delete(folder));
  pending.set(folder, result);
  return result;
}

async function checkOrBuild(
  sourcePath: string, sourceSha256: string, derivation: Derivation, key: string, folder: string,
): Promise<{ readonly entry: DerivedGraph; readonly manifest: Manifest }> {
  const sourceDir = dirname(sourcePath);
  const entry = (manifest: Manifest, builtMs: number | null, rebuiltBecause: string | null) =>
    ({ entry: { path: join(folder, MODEL_FILE), externalDataFolder: sourceDir, key, builtMs, rebuiltBecause }, manifest });
  const cached = await verifyEntry(folder, key, sourceDir);
  if (cached.ok) return entry(cached.manifest, null, null);
  const rebuiltBecause = cached.present ? `the cached rewritten graph in ${folder} ${cached.reason}` : null;
  if (rebuiltBecause !== null) reportCacheRebuild(`${rebuiltBecause}; discarded and rebuilt.`);
  const start = performance.now();
  let built: Manifest | null = null;
  await publishFolder(folder, async (temp) => {
    built = await build(sourcePath, sourceSha256, derivation, key, temp);
  }, async (dir) => (await verifyEntry(dir, key, sourceDir)).ok);
  const published = await verifyEntry(folder, key, sourceDir);
  const manifest = built ?? (published.ok ? published.manifest : null);
  if (manifest === null) throw new GraphRewriteError(`the rewritten graph in ${folder} could not be verified after it was written.`, 'Remove that folder and run again.');
  return entry(manifest, performance.now() - start, rebuiltBecause);
}

async function build(sourcePath: string, sourceSha256: string, derivation: Derivation, key: string, dir: string): Promise<Manifest> {
  const { spec, logitsRows, headLogits } = derivation;
  const sourceBytes = readFileSync(sourcePath);
  const source = decodeModel(sourceBytes, sourcePath);
  const inPlace = embeddedInitializers(source, sourceBytes);
  const rewritten = spec === null ? null : rewriteForInGraphDequantize(source, spec);
  // keepLogitsRows and withHeadInput clone what they change: the source itself is never mutated.
  let model = rewritten?.model ?? source;
  // The in-graph rewrite leaves the LM head as the source has it: the rows are cut the same way.
  if (logitsRows !== null) model = keepLogitsRows(model, logitsRows);
  let headInput: HeadInput | null = null;
  if (headLogits !== null) {
    // The rewrite leaves the head as the source has it: cut the same way as the reference graph's (reference-graphs.ts).
    const head = findLmHead(model, headLogits);
    const withHead = 'reason' in head ? head : withHeadInput(model, head);
    if ('reason' in withHead) throw new GraphRewriteError(`the rewritten graph's LM head cannot take hidden rows: ${withHead.reason}.`, 'Evaluate with --dequantize host.');
    model = withHead.model;
    headInput = { name: withHead.input, hiddenSize: withHead.hiddenSize };
  }
  pointAtSource(model, inPlace, basename(sourcePath));
  const bytes = encodeModel(model);
  await writeFile(join(dir, MODEL_FILE), bytes);
  const externalData: DataFileIdentity[] = [];
  for (const location of externalLocations(model, basename(sourcePath))) {
    externalData.push(await dataFileIdentity(dirname(sourcePath), location));
  }
  const manifest: Manifest = {
    key, version: IN_GRAPH_REWRITE_VERSION, cacheFormat: CACHE_FORMAT, sourceSha256, spec, io: rewritten?.io ?? null, headInput,
    ...(logitsRows === null ? {} : { logitsRows: true }),
    modelBytes: bytes.byteLength, modelSha256: sha256Text(bytes), externalData,
  };
  await writeFile(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

type EntryCheck = { readonly ok: true; readonly manifest: Manifest } | { readonly ok: false; readonly present: boolean; readonly reason: string };

/**
 * Whether `folder` holds this key's entry, whole and unaltered: the manifest parses and names this
 * key and format, the graph has the manifest's size and sha256, and each source data file still has
 * the identity recorded when the entry was built. `present` is false when there is no entry at all
 * (a first build, said nothing about).
 */
async function verifyEntry(folder: string, key: string, sourceDir: string): Promise<EntryCheck> {
  if (!existsSync(folder)) return { ok: false, present: false, reason: 'is missing' };
  let text: string;
  try {
    text = await readFile(join(folder, MANIFEST_FILE), 'utf8');
  } catch (error) {
    return { ok: false, present: true, reason: `has no readable ${MANIFEST_FILE} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})` };
  }
  let manifest: Manifest;
  try {
    manifest = JSON.parse(text) as Manifest;
  } catch {
    // the parser's message quotes the file; a one-line notice names the fault only
    return { ok: false, present: true, reason: `has an ${MANIFEST_FILE} that is not valid JSON (damaged)` };
  }
  if (manifest === null || typeof manifest !== 'object') return { ok: false, present: true, reason: `has an ${MANIFEST_FILE} that is not a manifest (damaged)` };
  if (manifest.key !== key || manifest.version !== IN_GRAPH_REWRITE_VERSION || manifest.cacheFormat !== CACHE_FORMAT || !Array.isArray(manifest.externalData)) {
    return { ok: false, present: true, reason: `has a ${MANIFEST_FILE} for another key or format` };
  }
  const graphCheck = await checkGraphFile(join(folder, MODEL_FILE), manifest.modelBytes, manifest.modelSha256);
  if (graphCheck !== null) return { ok: false, present: true, reason: graphCheck };
  for (const recorded of manifest.externalData) {
    const now = await dataFileIdentity(sourceDir, recorded.location).catch(() => null);
    if (now === null || !sameIdentity(now, recorded)) {
      return { ok: false, present: true, reason: `was built against another ${recorded.location} (size, modification time or sampled sha256 differ)` };
    }
  }
  return { ok: true, manifest };
}

