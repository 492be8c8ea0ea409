import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { NodeProto } from 'onnx-buf';
import { decodeModel, encodeModel, type ModelProto } from '../../onnx/onnx-model.js';
import { findLmHead, withHeadInput, withHiddenOutput } from '../../onnx/rewrite/lm-head-split.js';
import { keepLogitsRows, LOGITS_ROWS_REWRITE_VERSION } from '../../onnx/rewrite/logits-rows.js';
import type { HeadInput } from '../../lab/model-head.js';
import { reportCacheRebuild } from '../cache-notice.js';
import { sha256File, sha256Text } from '../model/file-digest.js';
import { dataFileIdentity, sameIdentity, type DataFileIdentity } from '../onnx/data-file-identity.js';
import { checkGraphFile, embeddedInitializers, externalLocations, pointAtSource } from '../onnx/source-backed-graph.js';
import { publishFolder } from '../synthetic/publish-folder.js';
import { kvscopeCacheRoot } from './lab-cache-dir.js';

/**
 * Bumped when the cut or the files change (2: the graphs read the source's weights in place, digests
 * verified; 3: one graph, its own head through a head input, no head graph holding the weight again;
 * 4: the whole sequence's hidden state as an output too, where the head reads kept rows only; 5: the
 * logits-rows cut applied first when asked, on a graph without num_logits_to_keep).
 */
const REFERENCE_GRAPHS_VERSION = 5;
const MODEL_FILE = 'model.onnx';
const MANIFEST_FILE = 'reference-graphs.json';

/** The source graph with its hidden state as an added output and hidden rows taken before its head, on disk. */
export interface ReferenceGraphs {
  /** the source graph plus the output `hidden` and `headInput`: the same logits bit for bit fed no head rows (lm-head-split.ort.test.ts) */
  readonly modelPath: string;
  readonly hidden: string;
  /**
   * where the head reads the last num_logits_to_keep rows of the hidden state (`hidden` is that
   * slice): the whole sequence's hidden state, `[1, seq, hiddenSize]`, also an output, so a reference
   * pass gets every row's hidden state while it computes the logits of two rows only (stored-reference.ts)
   */
  readonly sequenceHidden: string | null;
  /** hidden rows whose logits the graph returns after its own (app/lab/model-head.ts) */
  readonly headInput: HeadInput;
  /** the source graph's folder, where the graph reads its weights (onnxruntime's external initializers folder) */
  readonly externalDataFolder: string;
}

interface GraphFile {
  readonly bytes: number;
  readonly sha256: string;
}

interface Manifest {
  readonly key: string;
  readonly hidden: string;
  readonly sequenceHidden: string | null;
  readonly headInput: HeadInput;
  readonly model: GraphFile;
  /** the source's external data files the graphs read in place, by identity */
  readonly externalData: readonly DataFileIdentity[];
}

/**
 * The graph of a compact reference (docs/eval-record.md "The compact form, exact"), built once per source
 * graph and cached by content beside the in-graph rewrites: `<root>/reference-graphs/<key>/`. Like the
 * rewrite cache (source-backed-graph.ts) an entry holds no weight bytes: the graph reads them from the
 * source in place. It is its own LM head (withHeadInput), so one session holds the weights once.
 * Before use the graph's sha256 and each source data file's identity are checked; a
 * failed check discards the entry, rebuilds it and says so in one line. Returns the reason instead when
 * the head cannot be cut (the reference then keeps float32 logits). `logitsRows` (a graph without
 * num_logits_to_keep whose LM head was found: LogitsRowsSupport `derived`) applies keepLogitsRows
 * first, so the graph computes only the rows it is asked for, and the whole sequence's hidden state
 * is an output as on a graph that takes the input itself (the two-row reference pass).
 */
export async function ensureReferenceGraphs(
  sourcePath: string, logitsName: string, cacheDir = join(kvscopeCacheRoot(), 'reference-graphs'), logitsRows = false,
): Promise<ReferenceGraphs | { readonly reason: string }> {
  const absolute = resolve(sourcePath);
  const sourceDir = dirname(absolute);
  const key = sha256Text(JSON.stringify({
    version: REFERENCE_GRAPHS_VERSION, source: await sha256File(absolute), logitsName, ...(logitsRows ? { logitsRows: LOGITS_ROWS_REWRITE_VERSION } : {}),
  }));
  const folder = join(cacheDir, key.slice(0, 32));
  const result = (manifest: Manifest): ReferenceGraphs =>
    ({ modelPath: join(folder, MODEL_FILE), hidden: manifest.hidden, sequenceHidden: manifest.sequenceHidden, headInput: manifest.headInput, externalDataFolder: sourceDir });
  const cached = await verify(folder, key, sourceDir);
  if (cached.ok) return result(cached.manifest);
  if (cached.present) reportCacheRebuild(`the cached reference graphs in ${folder} ${cached.reason}; discarded and rebuilt.`);
  const sourceBytes = readFileSync(absolute);
  const decoded = decodeModel(sourceBytes, absolute);
  // keepLogitsRows clones what it changes: `decoded` still maps the source's embedded weights (embeddedInitializers).
  const source = logitsRows ? keepLogitsRows(decoded, logitsName) : decoded;
  const head = findLmHead(source, logitsName);
  if ('reason' in head) return head;
  const sequenceHidden = keptRowsSource(source, head.hidden);
  const withOutputs = withHiddenOutput(source, head);
  const model = withHeadInput(sequenceHidden === null ? withOutputs : withHiddenOutput(withOutputs, { ...head, hidden: sequenceHidden }), head);
  if ('reason' in model) return model;
  const inPlace = embeddedInitializers(decoded, sourceBytes);
  const sourceFile = basename(absolute);
  let built: Manifest | null = null;
  await publishFolder(folder, async (temp) => {
    const write = async (file: string, model: ModelProto): Promise<GraphFile> => {
      pointAtSource(model, inPlace, sourceFile);
      const bytes = encodeModel(model);
      await writeFile(join(temp, file), bytes);
      return { bytes: bytes.byteLength, sha256: sha256Text(bytes) };
    };
    const graph = await write(MODEL_FILE, model.model);
    const locations = externalLocations(model.model, sourceFile);
    const externalData = await Promise.all(locations.map((location) => dataFileIdentity(sourceDir, location)));
    built = { key, hidden: head.hidden, sequenceHidden, headInput: { name: model.input, hiddenSize: model.hiddenSize }, model: graph, externalData };
    await writeFile(join(temp, MANIFEST_FILE), `${JSON.stringify(built, null, 2)}\n`);
  }, async (dir) => (await verify(dir, key, sourceDir)).ok);
  const published = await verify(folder, key, sourceDir);
  const manifest = published.ok ? published.manifest : built;
  if (manifest === null) return { reason: `the reference graphs in ${folder} could not be verified after they were written` };
  return result(manifest);
}

/** Inputs that choose how many rows of logits a graph computes (transformers' num_logits_to_keep, logits-rows.ts). */
const KEEP_INPUTS = new Set(['num_logits_to_keep', 'logits_to_keep']);

/**
 * The tensor `hidden` is the kept rows of: the data of the Slice that makes it, where that Slice's
 * bounds are computed from a num_logits_to_keep input (logits-rows.ts, Optimum exports); null otherwise.
 */
function keptRowsSource(model: ModelProto, hidden: string): string | null {
  const graph = model.graph!;
  const producer = new Map<string, NodeProto>();
  for (const node of graph.node) for (const output of node.output) producer.set(output, node);
  const slice = producer.get(hidden);
  if (slice?.opType !== 'Slice' || slice.input[0] === undefined || !producer.has(slice.input[0])) return null;
  const seen = new Set<string>();
  const readsKeep = (name: string): boolean => {
    if (KEEP_INPUTS.has(name)) return graph.input.some((input) => input.name === name);
    if (seen.has(name)) return false;
    seen.add(name);
    return producer.get(name)?.input.some(readsKeep) ?? false;
  };
  return slice.input.slice(1).some(readsKeep) ? slice.input[0] : null;
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
    || (manifest.sequenceHidden !== null && typeof manifest.sequenceHidden !== 'string')
    || typeof manifest.model !== 'object' || typeof manifest.headInput !== 'object') {
    return { ok: false, present: true, reason: `has a ${MANIFEST_FILE} for another key or format` };
  }
  const fault = await checkGraphFile(join(folder, MODEL_FILE), manifest.model.bytes, manifest.model.sha256);
  if (fault !== null) return { ok: false, present: true, reason: fault };
  for (const recorded of manifest.externalData) {
    const now = await dataFileIdentity(sourceDir, recorded.location).catch(() => null);
    if (now === null || !sameIdentity(now, recorded)) {
      return { ok: false, present: true, reason: `was built against another ${recorded.location} (size, modification time or sampled sha256 differ)` };
    }
  }
  return { ok: true, manifest };
}
