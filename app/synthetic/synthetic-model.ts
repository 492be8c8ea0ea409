import { buildLlamaModel } from './llama-graph.js';
import { outlierKeyChannelsOf, syntheticLlamaWeights } from './llama-weights.js';
import { encodeModel } from '../onnx/onnx-model.js';
import { syntheticConfigJson, syntheticGenerationConfigJson } from './synthetic-config.js';
import { SYNTHETIC_FORMAT_VERSION, syntheticModelSpec, type SyntheticModelKind } from './synthetic-spec.js';
import { syntheticTokenizer } from './synthetic-tokenizer.js';

/** One file of a Hugging Face model folder, by its path relative to the folder ('/'-separated). */
export interface SyntheticModelFile {
  readonly path: string;
  /** text (UTF-8 on disk) or bytes */
  readonly content: string | Uint8Array;
}

export interface SyntheticModelFolder {
  readonly kind: SyntheticModelKind;
  readonly formatVersion: number;
  /** config.json, generation_config.json, tokenizer.json, tokenizer_config.json, then onnx/model.onnx */
  readonly files: readonly SyntheticModelFile[];
}

export const SYNTHETIC_ONNX_PATH = 'onnx/model.onnx';

/**
 * Every file of the synthetic model folder, in memory: about 95 MB, built in about a second. Pure
 * and deterministic: the same kind and format version give the same bytes on every machine.
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
  const tokenizer = syntheticTokenizer(spec);
  const outlierKeyChannels = Array.from({ length: spec.numLayers }, (_, layer) => outlierKeyChannelsOf(spec, layer));
  const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
  const files: SyntheticModelFile[] = [
    { path: 'config.json', content: json(syntheticConfigJson(spec, { outlierKeyChannels, mutedTokenIds: tokenizer.mutedTokenIds })) },
    { path: 'generation_config.json', content: json(syntheticGenerationConfigJson(spec)) },
    { path: 'tokenizer.json', content: json(tokenizer.tokenizerJson) },
    { path: 'tokenizer_config.json', content: json(tokenizer.tokenizerConfig) },
  ];
  if (withOnnx) {
    const weights = syntheticLlamaWeights(spec, tokenizer.mutedTokenIds);
    files.push({ path: SYNTHETIC_ONNX_PATH, content: encodeModel(buildLlamaModel(spec, weights)) });
  }
  return { kind, formatVersion: SYNTHETIC_FORMAT_VERSION, files };
}
