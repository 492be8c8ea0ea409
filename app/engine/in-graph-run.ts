import { activeExtensions, type ExtensionId } from '../cache/active-extensions.js';
import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import { layerFormats, layerUsesRuntimeFormat } from '../cache/cache-extensions.js';
import { resolveLayerSides, type SidePlan } from '../cache/cache-plan.js';
import { planLayerQuantization } from '../cache/quantization-plan.js';
import type { CacheLayerPlan } from '../cache/layer-plan.js';
import {
  inGraphUnsupportedReason,
  type InGraphDequantizeSpec, type InGraphFormatSideSpec, type InGraphKvIo, type InGraphLayerSpec, type InGraphSideSpec, type UnpackStrategy,
} from '../onnx/rewrite/in-graph-spec.js';
import { graphFormatReason } from '../onnx/rewrite/dequantize-format-side.js';
import type { QuantBackend, QuantParams } from '../quant/types.js';
import type { DecoderIo } from './decoder-io.js';
import type { DecoderSession } from './decoder-session.js';
import type { ExecutionProviderName } from './types.js';

/**
 * What a run on the in-graph dequantization path (`--dequantize graph`) adds to a GenerateRequest:
 * the request's session is the rewritten graph's, and `kv` names its stored-cache inputs and new-rows
 * outputs (app/onnx/rewrite/). The reference replay runs on the same session with every row kept in
 * full precision (run-lane.ts createReferenceLane), unless a source graph's session is given.
 */
export interface InGraphRun {
  readonly kv: InGraphKvIo;
  /** the source graph's session for the reference lane (optional: by default the rewritten graph replays it) */
  readonly referenceSession?: DecoderSession;
}

/**
 * The kvscope extensions whose stores the rewrite reads as they are: bits per side and per layer, and
 * full-precision layers (fed as dynamic layers). Sinks, rotation and outliers store more than a
 * backend store (exact sink rows, a rotated domain, a sparse list): runs with them dequantize on the host.
 */
const GRAPH_EXTENSIONS: ReadonlySet<ExtensionId> = new Set(['kv-bits-apart', 'layer-map', 'full-precision-layers', 'kv-format']);

/** The spec, or why the graph path cannot run these settings on this graph. */
export type InGraphPlan =
  | { readonly ok: true; readonly spec: InGraphDequantizeSpec }
  | { readonly ok: false; readonly reason: string };

/**
 * The rewrite's spec for a run: every layer the plan quantizes, keys and values as the cache stores
 * them, side by side as the cache plan resolves them (app/cache/cache-plan.ts: transformers' store with
 * K/V bits apart and per-layer bits, or a runtime format's bytes, per layer: --kv-format or the layer
 * map's format_key/format_value), with each
 * layer's heads and head size as the graph declares them (else the config's, as the engine reads
 * them). Refuses what the rewrite cannot express: HQQ's 3-bit int32 packing, and the extensions
 * whose stores are more than a backend store (GRAPH_EXTENSIONS).
 */
export function planInGraph(
  io: DecoderIo, geometry: { readonly numKeyValueHeads: number; readonly headDim: number }, plan: readonly CacheLayerPlan[],
  settings: QuantizedCacheSettings, unpack: UnpackStrategy,
): InGraphPlan {
  const numLayers = plan.length;
  const quantized = io.kvLayers.filter((layer) => plan[layer.layer] === 'quantized').map((layer) => layer.layer);
  const settingsReason = inGraphSettingsReason(settings, quantized, numLayers);
  if (settingsReason !== null) return { ok: false, reason: settingsReason };
  if (io.kvDtype === null) return { ok: false, reason: 'the graph has no KV inputs' };
  const pick = (dim: number | string | undefined, fallback: number): number => (typeof dim === 'number' ? dim : fallback);
  const layers: InGraphLayerSpec[] = [];
  for (const layer of io.kvLayers) {
    if (plan[layer.layer] !== 'quantized') continue;
    // each side as the cache plan resolves it: transformers' store (the backend's params) or a runtime's bytes (InGraphFormatSideSpec)
    const sides = resolveLayerSides(settings, layer.layer, numLayers);
    const quantization = planLayerQuantization(settings, layer.layer, numLayers);
    if (sides === null || quantization === null) return { ok: false, reason: `layer ${layer.layer} is planned quantized but its settings keep it in full precision` };
    const side = (planned: SidePlan, params: QuantParams, shape: readonly (number | string)[]): InGraphSideSpec | InGraphFormatSideSpec => {
      const dims = { kvHeads: pick(shape[1], geometry.numKeyValueHeads), headDim: pick(shape[3], geometry.headDim) };
      return planned.kind === 'runtime-format'
        ? { backend: 'runtime-format', format: planned.format, ...dims }
        : { backend: settings.backend as QuantBackend, nbits: params.nbits, axis: params.axis, groupSize: params.groupSize, ...dims };
    };
    layers.push({
      layer: layer.layer, pastKey: layer.pastKey, pastValue: layer.pastValue, presentKey: layer.presentKey, presentValue: layer.presentValue,
      dtype: layer.dtype, key: side(sides.key, quantization.key.params, layer.keyShape), value: side(sides.value, quantization.value.params, layer.valueShape),
    });
  }
  if (layers.length === 0) return { ok: false, reason: 'the plan quantizes no layer of this graph' };
  return { ok: true, spec: { layers, unpack } };
}

/**
 * Why the graph path cannot express these settings, whatever the graph: the extensions it does not
 * read (GRAPH_EXTENSIONS) and codes it does not unpack (HQQ 3-bit, …) on any layer the plan quantizes;
 * null when the settings allow it. planInGraph asks this first, and the run check (app/preflight/
 * check-run.ts) asks it before Run, so an explicit `graph` is refused with the same reason in both.
 */
export function inGraphSettingsReason(settings: QuantizedCacheSettings, quantizedLayers: readonly number[], numLayers: number): string | null {
  // The runtime's bytes cross as they are (in-graph-spec.ts InGraphFormatSideSpec) where the graph decodes the format bit for bit.
  const formats = quantizedLayers.flatMap((layer) => Object.values(layerFormats(settings, layer)).filter((name): name is string => name !== undefined));
  const formatReasons = [...new Set(formats)].map(graphFormatReason).filter((r) => r !== null);
  if (formatReasons.length > 0) return formatReasons.join('; ');
  const refused = activeExtensions(settings, numLayers).filter((extension) => !GRAPH_EXTENSIONS.has(extension.id));
  if (refused.length > 0) {
    return `the in-graph path does not express the kvscope extension(s) ${refused.map((extension) => extension.label).join(', ')}`;
  }
  for (const layer of quantizedLayers) {
    const quantization = planLayerQuantization(settings, layer, numLayers);
    if (quantization === null) continue;
    // A full side beside a transformers backend or a runtime format alike: the rewrite decodes both sides.
    if (quantization.key.fullPrecision === true || quantization.value.fullPrecision === true) {
      return `layer ${layer} keeps its ${quantization.key.fullPrecision === true ? 'keys' : 'values'} in full precision (a layer map's full side, a kvscope extension), which the rewrite does not express: it dequantizes both sides of every quantized layer`;
    }
    if (layerUsesRuntimeFormat(settings, layer)) continue;
    for (const [part, params] of [['keys', quantization.key.params], ['values', quantization.value.params]] as const) {
      const reason = inGraphUnsupportedReason({ backend: settings.backend as QuantBackend, nbits: params.nbits, axis: params.axis });
      if (reason !== null) return `${part}: ${reason}`;
    }
  }
  return null;
}

/** Bitwise unpacking on the CPU (cheapest there); float arithmetic elsewhere, which every EP runs on the device. */
export function unpackStrategyFor(executionProvider: ExecutionProviderName): UnpackStrategy {
  return executionProvider === 'cpu' ? 'bitwise' : 'arithmetic';
}
