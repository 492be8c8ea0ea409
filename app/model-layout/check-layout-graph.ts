import type { GenaiConfig } from '../config/genai-config.js';
import type { ModelConfig } from '../config/model-config.js';
import { checkDecoderIo } from '../engine/check-decoder-io.js';
import { readDecoderIo, type DecoderIo } from '../engine/decoder-io.js';
import type { ValueInfo } from '../engine/decoder-session.js';
import type { IoNaming } from '../engine/io-naming.js';
import { modelError, modelInfo, modelWarning, type ModelDiagnostic } from '../engine/model-diagnostic.js';
import type { GraphHeader } from '../onnx/graph-header.js';
import { graphPrecision, type GraphPrecision } from './graph-precision.js';
import { ioNamingFor } from './layout-naming.js';
import type { ModelLayout } from './model-layout.js';
import { expectedKvDtype, type TransformersJsConfig } from './transformers-js-config.js';

/** The graph signatures a layout runs on: its decode graph, and the pair's prefill graph. */
export interface LayoutGraphs {
  readonly graph: Pick<GraphHeader, 'inputs' | 'outputs'>;
  readonly prefill: Pick<GraphHeader, 'inputs' | 'outputs'> | null;
}

export interface LayoutGraphCheck {
  readonly naming: IoNaming;
  /** null when the graph cannot be driven (the diagnostics say why) */
  readonly io: DecoderIo | null;
  readonly diagnostics: readonly ModelDiagnostic[];
}

export interface LayoutGraphContext {
  readonly layout: ModelLayout;
  /** null when the config could not be read (only the graph's own I/O is checked then) */
  readonly config: ModelConfig | null;
  readonly genai: GenaiConfig | null;
  readonly transformersJs: TransformersJsConfig | null;
}

/**
 * Everything kvscope can know about feeding the graph before loading it: its inputs and outputs
 * under the layout's names (readDecoderIo), the config against them (checkDecoderIo), the legacy
 * pair's two signatures against each other, and transformers.js' declared KV dtype against the
 * graph's. Works on onnxruntime's metadata or the protobuf header alike (the two are equal).
 */
export function checkLayoutGraph(graphs: LayoutGraphs, context: LayoutGraphContext): LayoutGraphCheck {
  const { layout, config, genai } = context;
  const { inputs, outputs } = graphs.graph;
  const naming = ioNamingFor(genai, inputs);
  const reading = readDecoderIo(inputs, outputs, layout.graph, naming, { presentMayExceedValidLength: genai?.pastPresentShareBuffer === true });
  const diagnostics: ModelDiagnostic[] = [...reading.diagnostics];
  const io = reading.io;
  // A graph without any past input is the one thing to say about it (not a layer-count mismatch).
  if (io !== null && io.kvLayers.length === 0) diagnostics.push(noPastDiagnostic(layout, naming));
  else if (io !== null && config !== null) diagnostics.push(...checkDecoderIo(io, config, layout.graph));
  if (io !== null && graphs.prefill !== null) diagnostics.push(...checkPair(io, graphs.prefill, layout));
  if (io !== null && context.transformersJs !== null) diagnostics.push(...checkKvCacheDtype(io, context.transformersJs, layout));
  diagnostics.push(...layoutNotes(io, naming, layout));
  const fatal = diagnostics.some((d) => d.severity === 'error');
  return { naming, io: fatal ? null : io, diagnostics };
}

/** What the graph computes in, from the header and the I/O types. */
export function layoutPrecision(header: GraphHeader, io: DecoderIo | null, naming: IoNaming): GraphPrecision {
  const kvType = io?.kvDtype ?? kvInputType(header.inputs, naming);
  const logitsType = io?.logitsType ?? header.outputs.find((output) => output.name === naming.logits)?.type ?? null;
  return graphPrecision(header, kvType, logitsType);
}

function kvInputType(inputs: readonly ValueInfo[], naming: IoNaming): string | null {
  const pattern = naming.kv.packing === 'combined' ? naming.kv.past : naming.kv.pastKey;
  const prefix = pattern.slice(0, pattern.indexOf('%d'));
  return inputs.find((input) => input.name.startsWith(prefix))?.type ?? null;
}

function noPastDiagnostic(layout: ModelLayout, naming: IoNaming): ModelDiagnostic {
  const isPrefillOnly = /(^|\/)decoder_model(_\w+)?\.onnx$/.test(layout.graph);
  return modelError('io-missing-input',
    `${layout.graph} has no past inputs (${naming.kv.packing === 'combined' ? naming.kv.past : naming.kv.pastKey}), so there is no KV cache to study.`,
    isPrefillOnly
      ? 'Put decoder_with_past_model.onnx beside it (kvscope then runs the prefill on decoder_model.onnx and every later step on the other), or use decoder_model_merged.onnx.'
      : 'Use a "with past" export (optimum-cli export onnx --task text-generation-with-past).');
}

/**
 * decoder_model.onnx runs the prefill and must return every present the with-past graph takes back,
 * from inputs the with-past graph also takes (the engine feeds one set of inputs, the pair's session
 * drops what the prefill graph does not declare).
 */
function checkPair(io: DecoderIo, prefill: Pick<GraphHeader, 'inputs' | 'outputs'>, layout: ModelLayout): ModelDiagnostic[] {
  const prefillGraph = layout.prefillGraph ?? 'the prefill graph';
  const prefillOutputs = new Set(prefill.outputs.map((output) => output.name));
  const wanted = [io.logits, ...io.kvLayers.flatMap((layer) => [layer.presentKey, layer.presentValue]), ...io.states.map((state) => state.output)];
  const missing = [...new Set(wanted)].filter((name) => !prefillOutputs.has(name));
  const fed = new Set([io.inputIds, io.attentionMask, io.positionIds, io.logitsToKeep].filter((name): name is string => name !== null));
  const unfed = prefill.inputs.filter((input) => !fed.has(input.name)).map((input) => input.name);
  const diagnostics: ModelDiagnostic[] = [];
  if (missing.length > 0) {
    diagnostics.push(modelError('io-graph-pair',
      `${prefillGraph} does not return ${missing.slice(0, 4).map((name) => `\`${name}\``).join(', ')}${missing.length > 4 ? ', …' : ''}, which ${layout.graph} takes back as its past.`,
      'Use a pair exported together (optimum-cli export onnx --task text-generation-with-past --no-post-process), or the merged decoder.'));
  }
  if (unfed.length > 0) {
    diagnostics.push(modelError('io-graph-pair',
      `${prefillGraph} takes ${unfed.map((name) => `\`${name}\``).join(', ')}, which kvscope does not feed at the prefill.`,
      'Use a pair exported together by Optimum, or the merged decoder.'));
  }
  return diagnostics;
}

/** transformers.js_config.kv_cache_dtype names the KV type transformers.js allocates for a variant. */
function checkKvCacheDtype(io: DecoderIo, transformersJs: TransformersJsConfig, layout: ModelLayout): ModelDiagnostic[] {
  const expected = expectedKvDtype(transformersJs, layout.dtype);
  if (expected === null || io.kvDtype === null || expected === io.kvDtype) return [];
  return [modelWarning('config-mismatch',
    `config.json's transformers.js_config.kv_cache_dtype says ${expected} for the ${layout.dtype ?? 'fp32'} variant, but ${layout.graph}'s KV inputs are ${io.kvDtype}.`,
    'kvscope feeds what the graph declares; check that config.json belongs to this export.')];
}

function layoutNotes(io: DecoderIo | null, naming: IoNaming, layout: ModelLayout): ModelDiagnostic[] {
  const notes: ModelDiagnostic[] = [];
  if (naming.kv.packing === 'combined') {
    notes.push(modelInfo('layout-note', `${layout.graph} packs each layer's keys and values in one ${naming.kv.past} [2, batch, heads, seq, head_dim] (GPT-2's onnxruntime.transformers layout): kvscope splits it into the cache and joins it for the feeds.`));
  }
  if (io?.useCacheBranch != null) {
    notes.push(modelInfo('layout-note', `${layout.graph} is a merged decoder: kvscope feeds ${io.useCacheBranch} = false with an empty past at the prefill, true after (as Optimum does).`));
  }
  if (layout.prefillGraph !== null) {
    notes.push(modelInfo('layout-note', `the prefill runs on ${layout.prefillGraph} (no past inputs), every later step on ${layout.graph}: two sessions.`));
  }
  if (io !== null && (io.inputIdsType === 'int32' || io.attentionMaskType === 'int32' || io.positionIdsType === 'int32')) {
    notes.push(modelInfo('layout-note', `${layout.graph} takes int32 ids, mask or positions; kvscope feeds them as int32.`));
  }
  if (io?.presentMayExceedValidLength === true) {
    notes.push(modelInfo('layout-note', 'genai_config.json shares the past and present buffers (search.past_present_share_buffer): kvscope keeps only the valid rows of each present.'));
  }
  return notes;
}
