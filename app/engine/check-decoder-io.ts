import type { ModelConfig } from '../config/model-config.js';
import { formatLayerList } from '../preflight/layer-list.js';
import type { DecoderIo, KvLayerIo } from './decoder-io.js';
import { modelError, modelWarning, type ModelDiagnostic } from './model-diagnostic.js';

/**
 * Cross-checks the graph's KV inputs against the model config (config.json, or the one derived from
 * genai_config.json): the cache is planned from the config
 * (layer kinds, heads, head_dim: spec §2.2) and fed to the graph, so the two must describe the same
 * model. A contradiction is an error with a fix; a config that merely under-describes is a warning.
 */
export function checkDecoderIo(io: DecoderIo, config: ModelConfig, graphName: string): ModelDiagnostic[] {
  return [
    ...checkKvLayers(io, config, graphName),
    ...checkKvDims(io, config, graphName),
    ...checkLogits(io, config, graphName),
  ];
}

function checkKvLayers(io: DecoderIo, config: ModelConfig, graphName: string): ModelDiagnostic[] {
  const expected = new Set(config.geometry.kvCacheLayers);
  const present = new Set(io.kvLayers.map((layer) => layer.layer));
  const missing = [...expected].filter((layer) => !present.has(layer));
  const extra = [...present].filter((layer) => !expected.has(layer));
  if (missing.length === 0 && extra.length === 0) return [];
  const configSays = `${config.sourceName} describes ${config.geometry.numLayers} decoder layers, ` +
    `${expected.size} of them with a KV cache (${rangeText([...expected])})`;
  const inputsName = io.kvLayers[0]?.packing === 'combined' ? 'combined past_N inputs' : 'past_key_values';
  const graphHas = `${graphName} has ${inputsName} for ${present.size} layers (${rangeText([...present])})`;
  const details = [
    missing.length > 0 ? `no KV input for layer(s) ${rangeText(missing)}` : '',
    extra.length > 0 ? `KV inputs for layer(s) ${rangeText(extra)}, which the config says keep no KV cache (${extra.map((l) => config.layers.actualKinds[l] ?? 'beyond num_hidden_layers').join(', ')})` : '',
  ].filter((text) => text !== '').join('; ');
  return [modelError('io-kv-layer-mismatch', `${configSays}, but ${graphHas}: ${details}.`,
    `${config.sourceName} does not belong to this graph: use the config exported with the model (check num_hidden_layers and layer_types).`,
    [...missing, ...extra].sort((a, b) => a - b))];
}

function checkKvDims(io: DecoderIo, config: ModelConfig, graphName: string): ModelDiagnostic[] {
  const { numKeyValueHeads, headDim } = config.geometry;
  const diagnostics: ModelDiagnostic[] = [];
  const headsOff: KvLayerIo[] = [];
  const headDimOff: KvLayerIo[] = [];
  for (const layer of io.kvLayers) {
    const keyHeads = layer.keyShape[1];
    const valueHeads = layer.valueShape[1];
    if ((typeof keyHeads === 'number' && keyHeads !== numKeyValueHeads) || (typeof valueHeads === 'number' && valueHeads !== numKeyValueHeads)) {
      headsOff.push(layer);
    }
    const keyHeadDim = layer.keyShape[3];
    if (typeof keyHeadDim === 'number' && keyHeadDim !== headDim) headDimOff.push(layer);
  }
  if (headsOff.length > 0) {
    const first = headsOff[0]!;
    diagnostics.push(modelError('io-kv-heads',
      `${config.sourceName} says num_key_value_heads = ${numKeyValueHeads}, but ${graphName}'s ${first.pastKey} is ` +
      `[${first.keyShape.join(', ')}] (${String(first.keyShape[1])} KV heads)` +
      `${headsOff.length > 1 ? ` in ${headsOff.length} layers (${rangeText(headsOff.map((l) => l.layer))})` : ''}. ` +
      'The cache and the quantizer groups are planned from the config, so they would not fit the tensors.',
      `Use the config exported with this graph, or set "num_key_value_heads": ${String(first.keyShape[1])}.`,
      headsOff.map((l) => l.layer)));
  }
  if (headDimOff.length > 0) {
    const first = headDimOff[0]!;
    diagnostics.push(modelError('io-head-dim',
      `${config.sourceName} gives a head_dim of ${headDim} (head_dim, or hidden_size / num_attention_heads), but ${graphName}'s ` +
      `${first.pastKey} is [${first.keyShape.join(', ')}] (head_dim ${String(first.keyShape[3])}).`,
      `Use the config exported with this graph, or set "head_dim": ${String(first.keyShape[3])}.`,
      headDimOff.map((l) => l.layer)));
  }
  return diagnostics;
}

/** A vocab mismatch does not stop a run (ids index the logits row), but says the config is not this model's. */
function checkLogits(io: DecoderIo, config: ModelConfig, graphName: string): ModelDiagnostic[] {
  const vocab = io.logitsShape[io.logitsShape.length - 1];
  const configVocab = config.geometry.vocabSize;
  if (typeof vocab !== 'number' || configVocab === null || vocab === configVocab) return [];
  return [modelWarning('io-logits',
    `${graphName}'s logits have ${vocab} entries per token but ${config.sourceName} says vocab_size = ${configVocab}.`,
    `Check that ${config.sourceName} belongs to this graph; generation uses the graph's vocabulary.`)];
}

/** `0-4, 6`: the layers as runs (app/preflight/layer-list.ts), or `none`. */
function rangeText(layers: readonly number[]): string {
  return layers.length === 0 ? 'none' : formatLayerList(layers);
}

