import { buildLlamaModel } from './llama-graph.js';
import { outlierKeyChannelsOf, syntheticLlamaWeights } from './llama-weights.js';
import { encodeModel } from '../onnx/onnx-model.js';
import { syntheticConfigJson, syntheticGenerationConfigJson } from './synthetic-config.js';
import { SYNTHETIC_FORMAT_VERSION, syntheticModelSpec, type SyntheticModelKind } from './synthetic-spec.js';
import { syntheticTokenizer, type SyntheticTokenizer } from './synthetic-tokenizer.js';
import { retrievalTestbedTokenizer } from './retrieval-testbed-tokenizer.js';
import { retrievalTestbedWeights } from './retrieval-testbed-weights.js';
import { keepLogitsRows } from '../onnx/rewrite/logits-rows.js';
import { SCALE_DATA_FILE, scaleWeightPlan, weightChunks } from './scale-weights.js';

/** A file too large to hold: its size and its bytes, generated chunk by chunk as it is written. */
export interface StreamedContent {
  readonly bytes: number;
  /** each chunk is valid until the next is asked for (write it before going on) */
  readonly chunks: () => Iterable<Uint8Array>;
}

/** One file of a Hugging Face model folder, by its path relative to the folder ('/'-separated). */
export interface SyntheticModelFile {
  readonly path: string;
  /** text (UTF-8 on disk), bytes, or a streamed weights file (the scale models' external data) */
  readonly content: string | Uint8Array | StreamedContent;
}

export interface SyntheticModelFolder {
  readonly kind: SyntheticModelKind;
  readonly formatVersion: number;
  /** config.json, generation_config.json, tokenizer.json, tokenizer_config.json, then onnx/model.onnx */
  readonly files: readonly SyntheticModelFile[];
}

export const SYNTHETIC_ONNX_PATH = 'onnx/model.onnx';
/** The scale models' weights, beside the graph, as Optimum writes them. */
export const SYNTHETIC_DATA_PATH = `onnx/${SCALE_DATA_FILE}`;

/** Every file a built folder holds: the JSON files, the graph and, for a scale model, its data file. */
export function syntheticModelPaths(kind: SyntheticModelKind): string[] {
  const json = ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json'];
  return [...json, SYNTHETIC_ONNX_PATH, ...(syntheticModelSpec(kind).externalData ? [SYNTHETIC_DATA_PATH] : [])];
}

/**
 * Every file of the synthetic model folder, in memory: about 95 MB, built in about a second (a
 * scale model's weights file is streamed: drawn as it is written). Pure and deterministic: the same
 * kind and format version give the same bytes on every machine.
 */
export function buildSyntheticModel(kind: SyntheticModelKind): SyntheticModelFolder {
  return build(kind, true);
}

/**
 * The folder's small files only (milliseconds): what a cached folder's JSON files must equal, so a
 * folder written by an older generator is noticed without building the weights.
 */
export function buildSyntheticModelJsonFiles(kind: SyntheticModelKind): SyntheticModelFolder {
  return build(kind, false);
}

function build(kind: SyntheticModelKind, withOnnx: boolean): SyntheticModelFolder {
  const spec = syntheticModelSpec(kind);
  const testbed = kind === 'synthetic-retrieval';
  const tokenizer: SyntheticTokenizer = testbed ? retrievalTestbedTokenizer(spec.maxPositionEmbeddings) : syntheticTokenizer(spec);
  const outlierKeyChannels = Array.from({ length: spec.numLayers }, (_, layer) => (testbed ? [] : outlierKeyChannelsOf(spec, layer)));
  const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
  const files: SyntheticModelFile[] = [
    { path: 'config.json', content: json(syntheticConfigJson(spec, { outlierKeyChannels, mutedTokenIds: tokenizer.mutedTokenIds })) },
    { path: 'generation_config.json', content: json(syntheticGenerationConfigJson(spec)) },
    { path: 'tokenizer.json', content: json(tokenizer.tokenizerJson) },
    { path: 'tokenizer_config.json', content: json(tokenizer.tokenizerConfig) },
  ];
  if (withOnnx && spec.externalData) {
    // The graph is small (it names offsets); the weights are drawn as the data file is written.
    const plan = scaleWeightPlan(spec, tokenizer.mutedTokenIds);
    const graph = buildLlamaModel(spec, plan.weights);
    files.push({ path: SYNTHETIC_ONNX_PATH, content: encodeModel(spec.logitsToKeep ? keepLogitsRows(graph) : graph) });
    files.push({ path: SYNTHETIC_DATA_PATH, content: { bytes: plan.totalBytes, chunks: () => weightChunks(spec, plan) } });
  } else if (withOnnx) {
    const weights = testbed ? retrievalTestbedWeights(spec, tokenizer.mutedTokenIds) : syntheticLlamaWeights(spec, tokenizer.mutedTokenIds);
    const graph = buildLlamaModel(spec, weights);
    files.push({ path: SYNTHETIC_ONNX_PATH, content: encodeModel(spec.logitsToKeep ? keepLogitsRows(graph) : graph) });
  }
  return { kind, formatVersion: SYNTHETIC_FORMAT_VERSION, files };
}
