/**
 * A model folder as kvscope recognized it: which config it reads, which graph(s) it runs, and what
 * kind of export that is, said once (seams.md "Graph I/O from the layout, not from constants").
 * The graph's I/O naming and packing come from the header (layout-naming.ts, check-layout-graph.ts).
 */
export type LayoutKind = 'optimum' | 'transformers.js' | 'ort-genai' | 'optimum-merged' | 'optimum-split' | 'single-graph';

export type ConfigFileName = 'config.json' | 'genai_config.json';

export interface ModelLayout {
  readonly kind: LayoutKind;
  /** how the UI and the CLI name it: `ONNX Runtime GenAI folder (genai_config.json, model.onnx)` */
  readonly label: string;
  /** the config the model config (layer types, KV geometry) is read from */
  readonly configFile: ConfigFileName;
  /** set when both exist: genai_config.json is cross-checked against config.json, which transformers reads */
  readonly crossCheck: 'genai_config.json' | null;
  /** the graph of the decode steps (and of the prefill, unless `prefillGraph`), relative to the folder */
  readonly graph: string;
  /** the legacy Optimum pair's `decoder_model.onnx`: the prefill runs on it, without past inputs */
  readonly prefillGraph: string | null;
  /** the transformers.js dtype the file name's suffix names (`q4f16`), or null */
  readonly dtype: string | null;
}

/** The files of a model folder that matter: at its root and under `onnx/`, `/`-separated and relative. */
export interface FolderListing {
  /** the folder itself, for messages */
  readonly folder: string;
  readonly files: readonly { readonly path: string; readonly bytes: number }[];
}

export const LAYOUT_LABELS: Readonly<Record<LayoutKind, string>> = {
  'optimum': 'Hugging Face / Optimum export',
  'transformers.js': 'transformers.js variant',
  'ort-genai': 'ONNX Runtime GenAI folder',
  'optimum-merged': 'Optimum merged decoder',
  'optimum-split': 'Optimum decoder pair',
  'single-graph': 'single decoder graph',
};
