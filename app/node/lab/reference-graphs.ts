import type { ModelProto } from '../../onnx/onnx-model.js';
import { findLmHead, withHeadInput, withHiddenOutput } from '../../onnx/rewrite/lm-head-split.js';
import { keepLogitsRows, keptRowsSource, LOGITS_ROWS_REWRITE_VERSION } from '../../onnx/rewrite/logits-rows.js';
import type { HeadInput } from '../../lab/model-head.js';
import { defaultDerivedGraphsDir, ensureDerivedGraph } from '../onnx/derived-graph-cache.js';

/**
 * Bumped when the cut changes (2: the graphs read the source's weights in place, digests verified;
 * 3: one graph, its own head through a head input, no head graph holding the weight again; 4: the
 * whole sequence's hidden state as an output too, where the head reads kept rows only; 5: the
 * logits-rows cut applied first when asked, on a graph without num_logits_to_keep). Part of the
 * derived-graph cache's key (derived-graph-cache.ts), with the kind `reference`.
 */
const REFERENCE_GRAPHS_VERSION = 5;

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

/** What the cut reports, kept in the entry's manifest. */
interface ReferenceDetail {
  readonly hidden: string;
  readonly sequenceHidden: string | null;
  readonly headInput: HeadInput;
}

/**
 * The graph of a compact reference (docs/eval-record.md "The compact form, exact"), built once per source
 * graph and cached by content in the derived-graph cache (derived-graph-cache.ts, kind `reference`),
 * which verifies it before each use and rebuilds a damaged entry with a one-line notice. Like every
 * derived graph it holds no weight bytes: it reads them from the source in place. It is its own LM
 * head (withHeadInput), so one session holds the weights once. Returns the reason instead when the
 * head cannot be cut (the reference then keeps float32 logits). `logitsRows` (a graph without
 * num_logits_to_keep whose LM head was found: LogitsRowsSupport `derived`) applies keepLogitsRows
 * first, so the graph computes only the rows it is asked for, and the whole sequence's hidden state
 * is an output as on a graph that takes the input itself (the two-row reference pass).
 */
export async function ensureReferenceGraphs(
  sourcePath: string, logitsName: string, cacheDir = defaultDerivedGraphsDir(), logitsRows = false,
): Promise<ReferenceGraphs | { readonly reason: string }> {
  const entry = await ensureDerivedGraph<ReferenceDetail>(sourcePath, {
    kind: 'reference',
    params: { version: REFERENCE_GRAPHS_VERSION, logitsName, ...(logitsRows ? { logitsRows: LOGITS_ROWS_REWRITE_VERSION } : {}) },
    build: (decoded) => cut(decoded, logitsName, logitsRows),
    isDetail: isReferenceDetail,
  }, cacheDir);
  if ('reason' in entry) return entry;
  const { hidden, sequenceHidden, headInput } = entry.detail;
  return { modelPath: entry.path, hidden, sequenceHidden, headInput, externalDataFolder: entry.externalDataFolder };
}

function cut(decoded: ModelProto, logitsName: string, logitsRows: boolean): { model: ModelProto; detail: ReferenceDetail } | { reason: string } {
  // keepLogitsRows clones what it changes: `decoded` still maps the source's embedded weights (embeddedInitializers).
  const source = logitsRows ? keepLogitsRows(decoded, logitsName) : decoded;
  const head = findLmHead(source, logitsName);
  if ('reason' in head) return head;
  const sequenceHidden = keptRowsSource(source, head.hidden);
  const withOutputs = withHiddenOutput(source, head);
  const model = withHeadInput(sequenceHidden === null ? withOutputs : withHiddenOutput(withOutputs, { ...head, hidden: sequenceHidden }), head);
  if ('reason' in model) return model;
  return { model: model.model, detail: { hidden: head.hidden, sequenceHidden, headInput: { name: model.input, hiddenSize: model.hiddenSize } } };
}

function isReferenceDetail(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const detail = value as Partial<ReferenceDetail>;
  return typeof detail.hidden === 'string' && (detail.sequenceHidden === null || typeof detail.sequenceHidden === 'string')
    && typeof detail.headInput === 'object' && detail.headInput !== null;
}
