import type { DecoderIo } from '../engine/decoder-io.js';
import type { IoNaming, KvPacking } from '../engine/io-naming.js';
import type { ExternalDataReport } from './external-data.js';
import type { GraphPrecision } from './graph-precision.js';
import type { ConfigFileName, LayoutKind, ModelLayout } from './model-layout.js';

/** What the model panel and `kvscope preflight` say about a model's layout: plain data, structured-clone safe. */
export interface LayoutSummary {
  readonly kind: LayoutKind;
  /** `ONNX Runtime GenAI folder (genai_config.json, model.onnx)` */
  readonly label: string;
  /** the config read (config.json, or genai_config.json when the folder has no config.json) */
  readonly configFile: ConfigFileName;
  readonly crossCheck: 'genai_config.json' | null;
  /** the graphs a run uses, the prefill graph first */
  readonly graphs: readonly string[];
  /** where the I/O names come from (`Optimum`, `…/genai_config.json`, `onnxruntime.transformers GPT-2 …`) */
  readonly naming: string | null;
  readonly kvPacking: KvPacking | null;
  /** from the graph's tensor types, e.g. `fp16 weights · fp16 KV · fp16 logits` */
  readonly precision: string | null;
  /** the graph files plus every external data file they reference, on disk */
  readonly bytes: number | null;
  /** the external data files the graphs reference, relative to the folder */
  readonly externalData: readonly string[];
}

export function summarizeLayout(
  layout: ModelLayout, parts: { naming: IoNaming | null; io: DecoderIo | null; precision: GraphPrecision | null; externalData: ExternalDataReport | null },
): LayoutSummary {
  return {
    kind: layout.kind,
    label: layout.label,
    configFile: layout.configFile,
    crossCheck: layout.crossCheck,
    graphs: layout.prefillGraph === null ? [layout.graph] : [layout.prefillGraph, layout.graph],
    naming: parts.naming?.source ?? null,
    kvPacking: parts.io?.kvLayers[0]?.packing ?? parts.naming?.kv.packing ?? null,
    precision: parts.precision?.summary ?? null,
    bytes: parts.externalData?.totalBytes ?? null,
    externalData: parts.externalData?.files.map((file) => file.path) ?? [],
  };
}
