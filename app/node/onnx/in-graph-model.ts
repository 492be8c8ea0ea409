import type { ModelProto } from '../../onnx/onnx-model.js';
import { rewriteForInGraphDequantize } from '../../onnx/rewrite/in-graph-dequantize.js';
import { findLmHead, withHeadInput, withHiddenOutput } from '../../onnx/rewrite/lm-head-split.js';
import { keepLogitsRows, keptRowsSource, LOGITS_ROWS_REWRITE_VERSION } from '../../onnx/rewrite/logits-rows.js';
import type { HeadInput } from '../../lab/model-head.js';
import { IN_GRAPH_REWRITE_VERSION, type InGraphDequantizeSpec, type InGraphKvIo } from '../../onnx/rewrite/in-graph-spec.js';
import { GraphRewriteError } from '../../onnx/rewrite/rewrite-error.js';
import { defaultDerivedGraphsDir, ensureDerivedGraph, type DerivedEntry, type DerivedGraphKind } from './derived-graph-cache.js';

/** A graph derived from a source graph, on disk, ready for a session (derived-graph-cache.ts). */
export type DerivedGraph = Omit<DerivedEntry<unknown>, 'detail'>;

/** A rewritten graph on disk for in-graph dequantization, ready for a session. */
export interface InGraphModel extends DerivedGraph {
  readonly io: InGraphKvIo;
  /** the head input (withHeadInput) when the rewrite was asked for one: an evaluation's compact reference read on this graph */
  readonly headInput: HeadInput | null;
  /** the graph also takes num_logits_to_keep (keepLogitsRows composed into the same graph) */
  readonly logitsRows: boolean;
  /**
   * with the head input, where the head reads kept rows (num_logits_to_keep): the whole sequence's
   * final hidden state, `[1, seq, hiddenSize]`, an output too, so an evaluation's chunk can compute
   * its scored rows' logits through the head input a few rows at a time (evaluate.ts, issue 23)
   */
  readonly sequenceHidden: string | null;
}

/**
 * What one derived graph of this module is, composed in this order into one graph: the in-graph
 * dequantization rewrite (when `spec`), the logits-rows rewrite (keepLogitsRows), an LM head input
 * (withHeadInput). None of them: the source graph itself, its embedded weights read in place.
 */
interface Composition {
  readonly spec: InGraphDequantizeSpec | null;
  /** the logits output whose rows keepLogitsRows cuts, or null: every row */
  readonly logitsRows: string | null;
  readonly headLogits: string | null;
}

/** What the composed rewrites report, kept in the entry's manifest. */
interface CompositionDetail {
  readonly io: InGraphKvIo | null;
  readonly headInput: HeadInput | null;
  readonly logitsRows: boolean;
  readonly sequenceHidden: string | null;
}

/** The derived-graph cache (`$KVSCOPE_CACHE_DIR/derived-graphs`, else `~/.cache/kvscope/derived-graphs`), which these graphs share with the eval reference's. */
export function defaultInGraphCacheDir(): string {
  return defaultDerivedGraphsDir();
}

/** onnxruntime session options (`extra`) that let a rewritten graph read its weights from the source's folder. */
export function inGraphSessionConfig(model: Pick<InGraphModel, 'externalDataFolder'>): Record<string, string> {
  // onnxruntime_session_options_config_keys.h: kOrtSessionOptionsModelExternalInitializersFileFolderPath.
  // ORT refuses absolute or escaping `location`s (and symbolic links out of the graph's folder); this
  // key moves the folder relative locations resolve against, so the graph can sit elsewhere.
  return { model_external_initializers_file_folder_path: model.externalDataFolder };
}

/**
 * The in-graph dequantization rewrite of `sourcePath` for `spec`, built once and cached by content in
 * the derived-graph cache (derived-graph-cache.ts: the key hashes the kind, the rewrite's version, the
 * source graph's bytes and the spec: backend, bits, axes, group size, dtype, which layers, the unpack
 * strategy; the residual length does not change the graph). `logitsRows` (the logits output's name)
 * composes keepLogitsRows into the same graph (a run on a graph without num_logits_to_keep computes one
 * logits row per step: one derived graph, not two); `headLogits` adds an LM head input.
 *
 * The entry never holds weights (issue 23): initializers stored in the source graph point back at
 * their bytes inside the source `.onnx`, and external data files are read where they are, through
 * inGraphSessionConfig. So nothing is linked or copied, on one file system or across two.
 */
export async function ensureInGraphModel(
  sourcePath: string, spec: InGraphDequantizeSpec, cacheDir = defaultInGraphCacheDir(),
  options: { readonly headLogits?: string; readonly logitsRows?: string } = {},
): Promise<InGraphModel> {
  const { detail, ...entry } = await ensureComposed(sourcePath, { spec, logitsRows: options.logitsRows ?? null, headLogits: options.headLogits ?? null }, cacheDir);
  return { ...entry, io: detail.io!, headInput: detail.headInput, logitsRows: detail.logitsRows, sequenceHidden: detail.sequenceHidden };
}

/**
 * The source graph with keepLogitsRows applied (a `num_logits_to_keep` input: the prefill and every
 * step compute the last row's logits only), cached exactly as the in-graph rewrite is, in the same
 * cache. Throws GraphRewriteError when the LM head is not found (callers decide that from the
 * header first: app/model-layout/logits-rows-support.ts).
 */
export async function ensureLogitsRowsModel(sourcePath: string, cacheDir = defaultInGraphCacheDir(), logitsName = 'logits'): Promise<DerivedGraph> {
  const { detail: _detail, ...entry } = await ensureComposed(sourcePath, { spec: null, logitsRows: logitsName, headLogits: null }, cacheDir);
  return entry;
}

/**
 * The source graph itself, its weights stored inside the `.onnx` read in place (issue 23): every
 * initializer of IN_PLACE_MIN_BYTES or more becomes external data pointing at its bytes inside the
 * source file, so onnxruntime memory-maps them (one set of page-cache pages for every session and
 * process) where a session of the source graph parses them into memory of its own, once per session.
 * The same graph otherwise, node for node: the same outputs bit for bit at the same prepacking
 * setting (in-place-graph.ort.test.ts).
 */
export async function ensureInPlaceModel(sourcePath: string, cacheDir = defaultInGraphCacheDir()): Promise<DerivedGraph> {
  const { detail: _detail, ...entry } = await ensureComposed(sourcePath, { spec: null, logitsRows: null, headLogits: null }, cacheDir);
  return entry;
}

async function ensureComposed(sourcePath: string, composition: Composition, cacheDir: string): Promise<DerivedEntry<CompositionDetail>> {
  const { spec, logitsRows, headLogits } = composition;
  const kind: DerivedGraphKind = spec !== null ? 'in-graph' : logitsRows !== null ? 'logits-rows' : 'in-place';
  const params = {
    ...(spec === null ? {} : { inGraph: { version: IN_GRAPH_REWRITE_VERSION, spec } }),
    ...(logitsRows === null ? {} : { logitsRows: { version: LOGITS_ROWS_REWRITE_VERSION, logits: logitsRows } }),
    // version 2: the whole sequence's hidden state is an output too (CompositionDetail.sequenceHidden)
    ...(headLogits === null ? {} : { headLogits, headVersion: 2 }),
  };
  const entry = await ensureDerivedGraph(sourcePath, { kind, params, build: (source) => compose(source, composition), isDetail: isCompositionDetail }, cacheDir);
  // compose throws rather than giving a reason: a reason here is a broken invariant
  if ('reason' in entry) throw new GraphRewriteError(entry.reason, 'Evaluate with --dequantize host.');
  return entry;
}

function compose(source: ModelProto, composition: Composition): { model: ModelProto; detail: CompositionDetail } {
  const { spec, logitsRows, headLogits } = composition;
  const rewritten = spec === null ? null : rewriteForInGraphDequantize(source, spec);
  // keepLogitsRows and withHeadInput clone what they change: the source itself is never mutated.
  let model = rewritten?.model ?? source;
  // The in-graph rewrite leaves the LM head as the source has it: the rows are cut the same way.
  if (logitsRows !== null) model = keepLogitsRows(model, logitsRows);
  let headInput: HeadInput | null = null;
  let sequenceHidden: string | null = null;
  if (headLogits !== null) {
    // The rewrite leaves the head as the source has it: cut the same way as the reference graph's (reference-graphs.ts).
    const head = findLmHead(model, headLogits);
    sequenceHidden = 'reason' in head ? null : keptRowsSource(model, head.hidden);
    // An added output only: every node and every other output as before.
    const withOutput = 'reason' in head || sequenceHidden === null ? model : withHiddenOutput(model, { ...head, hidden: sequenceHidden });
    const withHead = 'reason' in head ? head : withHeadInput(withOutput, head);
    if ('reason' in withHead) throw new GraphRewriteError(`the rewritten graph's LM head cannot take hidden rows: ${withHead.reason}.`, 'Evaluate with --dequantize host.');
    model = withHead.model;
    headInput = { name: withHead.input, hiddenSize: withHead.hiddenSize };
  }
  return { model, detail: { io: rewritten?.io ?? null, headInput, logitsRows: logitsRows !== null, sequenceHidden } };
}

function isCompositionDetail(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const detail = value as Partial<CompositionDetail>;
  return typeof detail.logitsRows === 'boolean' && (detail.io === null || typeof detail.io === 'object') && (detail.headInput === null || typeof detail.headInput === 'object')
    && (detail.sequenceHidden === null || typeof detail.sequenceHidden === 'string');
}
