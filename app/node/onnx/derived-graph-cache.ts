import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, utimesSync } from 'node:fs';
import { entryFolders } from '../files/entry-folders.js';
import { readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { performance } from 'node:perf_hooks';
import { decodeModel, encodeModel, type ModelProto } from '../../onnx/onnx-model.js';
import { GraphRewriteError } from '../../onnx/rewrite/rewrite-error.js';
import { reportCacheRebuild } from '../cache-notice.js';
import { kvscopeCacheRoot } from '../lab/lab-cache-dir.js';
import { sha256File, sha256Text } from '../model/file-digest.js';
import { publishFolder } from '../synthetic/publish-folder.js';
import { dataFileIdentity, sameIdentity, type DataFileIdentity } from './data-file-identity.js';
import { checkGraphFile, embeddedInitializers, externalLocations, pointAtSource, relocateExternalData } from './source-backed-graph.js';

/*
 * The one cache of graphs derived from a user's graph (issue 23): the in-graph dequantization rewrite,
 * the logits-rows cut, the eval reference's graph (hidden-state outputs, a head input) and the source
 * graph with its embedded weights read in place. Every entry is `<root>/derived-graphs/<key>/` holding
 * `model.onnx` (the graph alone: its weights are read from the source's files in place,
 * source-backed-graph.ts) and `derived-graph.json` (what was derived from which source, the graph's
 * size and sha256, the source data files' identities). The key hashes the kind of derivation, what it
 * was asked (its rewrites' versions and settings) and the source graph's sha256, so an entry is
 * exactly what a fresh build would write (STYLE.md §15). Each open verifies the entry; a failed check
 * discards it, rebuilds it and says so in one line. An open touches the manifest (its mtime is the
 * entry's last use), and entries beyond DERIVED_GRAPHS_MAX_BYTES go least recently used first.
 */

/** What a derived graph is, part of its key and shown by `kvscope cache list`. */
export type DerivedGraphKind = 'in-graph' | 'logits-rows' | 'in-place' | 'reference';

const KIND_WHAT: Readonly<Record<DerivedGraphKind, string>> = {
  'in-graph': 'in-graph dequantization rewrite',
  'logits-rows': 'graph computing only the logits rows asked for (num_logits_to_keep added)',
  'in-place': 'the graph itself, its weights inside the .onnx read in place',
  reference: 'compact-reference graph (hidden-state outputs, LM head input)',
};

export const DERIVED_GRAPHS_FOLDER = 'derived-graphs';
/** Bumped when the entry's layout changes (1: the one derived-graph cache; before, `in-graph/` and `reference-graphs/`). */
const CACHE_FORMAT = 1;
const MODEL_FILE = 'model.onnx';
const MANIFEST_FILE = 'derived-graph.json';
/**
 * The folder's cap. An entry holds a graph without weights: kilobytes to a few MB (a rewritten graph's
 * small initializers), so a gigabyte keeps thousands; past it the least recently used go first.
 */
export const DERIVED_GRAPHS_MAX_BYTES = 1024 ** 3;
/** Entries used this recently are never evicted by the cap: another process may be about to open one. */
const IN_USE_MS = 10 * 60 * 1000;

/** `$KVSCOPE_CACHE_DIR/derived-graphs`, else `~/.cache/kvscope/derived-graphs`. */
export function defaultDerivedGraphsDir(): string {
  return join(kvscopeCacheRoot(), DERIVED_GRAPHS_FOLDER);
}

/** A derived graph on disk, ready for a session, with what its derivation reported (`detail`). */
export interface DerivedEntry<Detail> {
  /** the derived `.onnx`: the graph alone; every weight stays in the source's files */
  readonly path: string;
  /**
   * the folder its weights are read from (the source graph's), to give onnxruntime as
   * `session.model_external_initializers_file_folder_path`; the cache entry holds no weight bytes
   */
  readonly externalDataFolder: string;
  /** the content key: sha256 of the kind, the derivation's parameters and the source graph's bytes */
  readonly key: string;
  /** milliseconds the derivation took in this call; null when the cached file was used */
  readonly builtMs: number | null;
  /** why a cached entry was discarded and built again in this call (one line), or null */
  readonly rebuiltBecause: string | null;
  readonly detail: Detail;
}

/** One kind of derivation: what keys it, how it is built, how its manifest's detail is checked. */
export interface Derivation<Detail> {
  readonly kind: DerivedGraphKind;
  /** JSON: the rewrites' versions and settings that make the graph (the source's sha256 is added to the key) */
  readonly params: unknown;
  /**
   * the derived graph from the decoded source (a pure rewrite: the source is not mutated), or why
   * there is none (nothing is cached then)
   */
  build(source: ModelProto): { readonly model: ModelProto; readonly detail: Detail } | { readonly reason: string };
  /** whether a parsed manifest's detail has this kind's shape */
  isDetail(value: unknown): boolean;
}

interface Manifest<Detail> {
  readonly format: 'kvscope-derived-graph';
  readonly cacheFormat: number;
  readonly key: string;
  readonly kind: DerivedGraphKind;
  /** the source graph as it was when the entry was built: its path (for the listing) and sha256 (in the key) */
  readonly source: { readonly path: string; readonly sha256: string };
  readonly params: unknown;
  readonly detail: Detail;
  /** the derived graph's size and sha256, checked before every use */
  readonly model: { readonly bytes: number; readonly sha256: string };
  /** the source's external data files the graph reads in place (relative to the source graph's folder), by identity */
  readonly externalData: readonly DataFileIdentity[];
}

/** One build per entry per process; concurrent callers share it. */
const pending = new Map<string, Promise<DerivedEntry<unknown> | { readonly reason: string }>>();

/**
 * The derived graph of `sourcePath` by `derivation`, from the cache when its entry is whole, else
 * built and published atomically (publishFolder: concurrent runs, in this process or others, see a
 * whole folder or none). Returns the derivation's reason where it cannot derive this graph.
 */
export async function ensureDerivedGraph<Detail>(
  sourcePath: string, derivation: Derivation<Detail>, cacheDir = defaultDerivedGraphsDir(),
): Promise<DerivedEntry<Detail> | { readonly reason: string }> {
  const absolute = resolve(sourcePath);
  const sourceSha256 = await sha256File(absolute);
  // the name the graph reads the source's own bytes by is in the graph, so in the key: the same bytes under another name are another entry
  const layout = weightsLayout(absolute);
  const key = sha256Text(JSON.stringify({ cacheFormat: CACHE_FORMAT, kind: derivation.kind, params: derivation.params, sourceSha256, sourceFile: layout.sourceFile }));
  const folder = join(cacheDir, key.slice(0, 32));
  const existing = pending.get(folder);
  if (existing !== undefined) return existing as Promise<DerivedEntry<Detail> | { readonly reason: string }>;
  const result = checkOrBuild(absolute, layout, sourceSha256, derivation, key, folder, cacheDir).finally(() => pending.delete(folder));
  pending.set(folder, result);
  return result;
}

/**
 * Where a derived graph reads the source's weights: the source graph's folder, or, where the source
 * `.onnx` is a symbolic link (the Hugging Face hub cache: `snapshots/<rev>/onnx/model.onnx` links to
 * `blobs/<sha256>`, as does each data file), the folder the links lead to, with each file named as it
 * is there. onnxruntime resolves an external data path and refuses one whose real path leaves the
 * folder it reads from ("External data path escapes model directory"), so the links' own folder
 * cannot serve.
 */
interface WeightsLayout {
  /** the folder onnxruntime reads the weights from (`session.model_external_initializers_file_folder_path`) */
  readonly folder: string;
  /** the source `.onnx`'s name there */
  readonly sourceFile: string;
  /** a source data file's `location` as it is named there */
  readonly relocate: (location: string) => string;
}

function weightsLayout(sourcePath: string): WeightsLayout {
  const sourceDir = dirname(sourcePath);
  if (!lstatSync(sourcePath).isSymbolicLink()) return { folder: sourceDir, sourceFile: basename(sourcePath), relocate: (location) => location };
  const real = realpathSync(sourcePath);
  const folder = dirname(real);
  return {
    folder, sourceFile: basename(real),
    relocate(location) {
      const target = relative(folder, realpathSync(join(sourceDir, location)));
      if (isAbsolute(target) || target.split(sep).includes('..')) {
        throw new GraphRewriteError(`${location} beside ${basename(sourcePath)} links out of the folder its graph links into (${folder}), where onnxruntime would read it.`,
          'Copy the model folder\'s files (not links) into a folder of their own and use that folder.');
      }
      return target;
    },
  };
}

async function checkOrBuild<Detail>(
  sourcePath: string, layout: WeightsLayout, sourceSha256: string, derivation: Derivation<Detail>, key: string, folder: string, cacheDir: string,
): Promise<DerivedEntry<Detail> | { readonly reason: string }> {
  const sourceDir = layout.folder;
  const entry = (manifest: Manifest<Detail>, builtMs: number | null, rebuiltBecause: string | null): DerivedEntry<Detail> =>
    ({ path: join(folder, MODEL_FILE), externalDataFolder: sourceDir, key, builtMs, rebuiltBecause, detail: manifest.detail });
  const cached = await verifyEntry(folder, key, derivation, sourceDir);
  if (cached.ok) {
    touch(folder);
    return entry(cached.manifest, null, null);
  }
  const start = performance.now();
  const sourceBytes = readFileSync(sourcePath);
  const source = decodeModel(sourceBytes, sourcePath);
  // the byte ranges of the source's embedded weights, read before any rewrite copies them
  const inPlace = embeddedInitializers(source, sourceBytes);
  const derived = derivation.build(source);
  if ('reason' in derived) return derived;
  const rebuiltBecause = cached.present ? `the cached derived graph (${KIND_WHAT[derivation.kind]}) in ${folder} ${cached.reason}` : null;
  if (rebuiltBecause !== null) reportCacheRebuild(`${rebuiltBecause}; discarded and rebuilt.`);
  let built: Manifest<Detail> | null = null;
  await publishFolder(folder, async (temp) => {
    relocateExternalData(derived.model, layout.relocate);
    pointAtSource(derived.model, inPlace, layout.sourceFile);
    const bytes = encodeModel(derived.model);
    await writeFile(join(temp, MODEL_FILE), bytes);
    const externalData: DataFileIdentity[] = [];
    for (const location of externalLocations(derived.model, layout.sourceFile)) externalData.push(await dataFileIdentity(sourceDir, location));
    built = {
      format: 'kvscope-derived-graph', cacheFormat: CACHE_FORMAT, key, kind: derivation.kind, source: { path: sourcePath, sha256: sourceSha256 },
      params: derivation.params, detail: derived.detail, model: { bytes: bytes.byteLength, sha256: sha256Text(bytes) }, externalData,
    };
    await writeFile(join(temp, MANIFEST_FILE), `${JSON.stringify(built, null, 2)}\n`);
  }, async (dir) => (await verifyEntry(dir, key, derivation, sourceDir)).ok);
  const published = await verifyEntry(folder, key, derivation, sourceDir);
  const manifest = built ?? (published.ok ? published.manifest : null);
  if (manifest === null) throw new GraphRewriteError(`the derived graph in ${folder} could not be verified after it was written.`, 'Remove that folder and run again.');
  evictBeyondCap(cacheDir, DERIVED_GRAPHS_MAX_BYTES, Date.now());
  return entry(manifest, performance.now() - start, rebuiltBecause);
}

type EntryCheck<Detail> = { readonly ok: true; readonly manifest: Manifest<Detail> } | { readonly ok: false; readonly present: boolean; readonly reason: string };

/**
 * Whether `folder` holds this key's entry, whole and unaltered: the manifest parses and names this
 * key, format and kind, its detail has the kind's shape, the graph has the manifest's size and sha256,
 * and each source data file still has the identity recorded when the entry was built. `present` is
 * false when there is no entry at all (a first build, said nothing about).
 */
async function verifyEntry<Detail>(folder: string, key: string, derivation: Derivation<Detail>, sourceDir: string): Promise<EntryCheck<Detail>> {
  if (!existsSync(folder)) return { ok: false, present: false, reason: 'is missing' };
  let text: string;
  try {
    text = await readFile(join(folder, MANIFEST_FILE), 'utf8');
  } catch (error) {
    return { ok: false, present: true, reason: `has no readable ${MANIFEST_FILE} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})` };
  }
  let manifest: Manifest<Detail>;
  try {
    manifest = JSON.parse(text) as Manifest<Detail>;
  } catch {
    // the parser's message quotes the file; a one-line notice names the fault only
    return { ok: false, present: true, reason: `has a ${MANIFEST_FILE} that is not valid JSON (damaged)` };
  }
  if (manifest === null || typeof manifest !== 'object' || manifest.format !== 'kvscope-derived-graph' || manifest.key !== key
    || manifest.cacheFormat !== CACHE_FORMAT || manifest.kind !== derivation.kind || !Array.isArray(manifest.externalData)
    || typeof manifest.model !== 'object' || manifest.model === null || !derivation.isDetail(manifest.detail)) {
    return { ok: false, present: true, reason: `has a ${MANIFEST_FILE} for another key or format` };
  }
  const graphCheck = await checkGraphFile(join(folder, MODEL_FILE), manifest.model.bytes, manifest.model.sha256);
  if (graphCheck !== null) return { ok: false, present: true, reason: graphCheck };
  for (const recorded of manifest.externalData) {
    const now = await dataFileIdentity(sourceDir, recorded.location).catch(() => null);
    if (now === null || !sameIdentity(now, recorded)) {
      return { ok: false, present: true, reason: `was built against another ${recorded.location} (size, modification time or sampled sha256 differ)` };
    }
  }
  return { ok: true, manifest };
}

/** Marks an entry used now (its manifest's mtime), for the listing and least-recently-used eviction. */
function touch(folder: string): void {
  const now = new Date();
  try {
    utimesSync(join(folder, MANIFEST_FILE), now, now);
  } catch {
    // a read-only cache still serves; its entries keep their last write as their last use
  }
}

/** One entry of the derived-graph cache as `kvscope cache list` shows it. */
export interface DerivedGraphListing {
  readonly name: string;
  readonly what: string;
  readonly bytes: number;
  readonly lastUsedMs: number;
}

/** Every entry of the cache folder `dir` (a half-written or foreign folder is listed as such, so prune can remove it). */
export function listDerivedGraphs(dir = defaultDerivedGraphsDir()): DerivedGraphListing[] {
  return entryFolders(dir).map((name) => {
    const folder = join(dir, name);
    const { bytes, lastWriteMs } = folderBytes(folder);
    let what = 'derived graph without a readable manifest (rebuilt on demand; prune removes it)';
    let lastUsedMs = lastWriteMs;
    try {
      const manifest = JSON.parse(readFileSync(join(folder, MANIFEST_FILE), 'utf8')) as Partial<Manifest<unknown>>;
      lastUsedMs = statSync(join(folder, MANIFEST_FILE)).mtimeMs;
      const kind = manifest.kind !== undefined && manifest.kind in KIND_WHAT ? KIND_WHAT[manifest.kind] : 'derived graph';
      what = `${kind} of ${manifest.source?.path ?? 'an unnamed graph'}`;
    } catch {
      // listed as unreadable
    }
    return { name, what, bytes, lastUsedMs };
  });
}

/** Removes one entry (`name`: a folder of `dir`); what is removed is derived again when next needed. */
export function removeDerivedGraph(dir: string, name: string): void {
  if (name !== basename(name) || name.startsWith('.')) return;
  rmSync(join(dir, name), { recursive: true, force: true });
}

/** Removes the least recently used entries of `dir` until it holds at most `maxBytes`, sparing those used within IN_USE_MS. */
export function evictBeyondCap(dir: string, maxBytes: number, nowMs: number): void {
  const entries = listDerivedGraphs(dir).sort((a, b) => a.lastUsedMs - b.lastUsedMs);
  let total = entries.reduce((sum, entry) => sum + entry.bytes, 0);
  for (const entry of entries) {
    if (total <= maxBytes) break;
    if (nowMs - entry.lastUsedMs < IN_USE_MS) continue;
    removeDerivedGraph(dir, entry.name);
    total -= entry.bytes;
  }
}

/** Bytes of the regular files directly in `folder` and the latest write among them. */
function folderBytes(folder: string): { bytes: number; lastWriteMs: number } {
  let bytes = 0;
  let lastWriteMs = 0;
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return { bytes, lastWriteMs };
  }
  for (const name of names) {
    try {
      const stat = statSync(join(folder, name));
      if (!stat.isFile()) continue;
      bytes += stat.size;
      lastWriteMs = Math.max(lastWriteMs, stat.mtimeMs);
    } catch {
      // removed while listing
    }
  }
  return { bytes, lastWriteMs };
}
