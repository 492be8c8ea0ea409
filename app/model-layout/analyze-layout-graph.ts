import type { DecoderIo } from '../engine/decoder-io.js';
import type { IoNaming } from '../engine/io-naming.js';
import type { ModelDiagnostic } from '../engine/model-diagnostic.js';
import type { GraphHeader } from '../onnx/graph-header.js';
import { checkLayoutGraph, layoutPrecision, type LayoutGraphContext } from './check-layout-graph.js';
import { externalDataReport, type ExternalDataReport } from './external-data.js';
import type { GraphPrecision } from './graph-precision.js';
import { logitsRowsSupport, type LogitsRowsSupport } from './logits-rows-support.js';
import type { FolderListing } from './model-layout.js';
import { weightsHeldTwiceBytes } from './weights-held-twice.js';
import { embeddedWeightsBytes } from './embedded-weights.js';

/** Everything the headers of a layout's graph(s) say, before any session exists. */
export interface LayoutGraphAnalysis {
  readonly naming: IoNaming;
  readonly io: DecoderIo | null;
  readonly precision: GraphPrecision;
  readonly externalData: ExternalDataReport;
  /** whether a run computes only the logits rows it reads (the graph's own input, or a derived graph) */
  readonly logitsRows: LogitsRowsSupport;
  /** float32 weights a CPU session holds twice (a tied embedding: weights-held-twice.ts) */
  readonly weightsHeldTwiceBytes: number;
  /**
   * weights stored inside the decode graph's `.onnx` (embedded-weights.ts), which eval and sweep read
   * in place through a derived graph (app/node/lab/run-eval.ts); the prefill graph's of a legacy pair in `prefillEmbeddedWeightsBytes`
   */
  readonly embeddedWeightsBytes: number;
  readonly prefillEmbeddedWeightsBytes: number;
  readonly diagnostics: readonly ModelDiagnostic[];
}

export function analyzeLayoutGraph(
  headers: { readonly graph: GraphHeader; readonly prefill: GraphHeader | null }, listing: FolderListing, context: LayoutGraphContext,
): LayoutGraphAnalysis {
  const { layout } = context;
  const check = checkLayoutGraph(headers, context);
  const externalData = externalDataReport(headers.graph, layout.graph, listing, context.transformersJs);
  const prefillData = headers.prefill === null || layout.prefillGraph === null
    ? null
    : externalDataReport(headers.prefill, layout.prefillGraph, listing, context.transformersJs);
  const merged: ExternalDataReport = prefillData === null ? externalData : {
    files: [...prefillData.files, ...externalData.files],
    missing: [...prefillData.missing, ...externalData.missing],
    totalBytes: prefillData.totalBytes + externalData.totalBytes,
    diagnostics: [...prefillData.diagnostics, ...externalData.diagnostics],
  };
  return {
    naming: check.naming,
    io: check.io,
    precision: layoutPrecision(headers.graph, check.io, check.naming),
    externalData: merged,
    logitsRows: logitsRowsSupport(headers.graph, check.io, layout),
    weightsHeldTwiceBytes: weightsHeldTwiceBytes(headers.graph),
    embeddedWeightsBytes: embeddedWeightsBytes(headers.graph),
    prefillEmbeddedWeightsBytes: headers.prefill === null ? 0 : embeddedWeightsBytes(headers.prefill),
    diagnostics: [...merged.diagnostics, ...check.diagnostics],
  };
}
