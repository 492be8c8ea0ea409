import { formatLayerList } from '../preflight/layer-list.js';
import type { QuantizedCacheSettings } from './cache-config.js';
import { layerBits, layerMapFormats } from './cache-extensions.js';

export type ExtensionId = 'kv-bits-apart' | 'layer-map' | 'full-precision-layers' | 'attention-sinks' | 'rotation' | 'outliers' | 'kv-format';
export const EXTENSION_IDS: readonly ExtensionId[] = ['kv-bits-apart', 'layer-map', 'full-precision-layers', 'attention-sinks', 'rotation', 'outliers', 'kv-format'];

/** One kvscope extension that makes a run differ from transformers' QuantizedCache, as records and UIs name it. */
export interface ActiveExtension {
  readonly id: ExtensionId;
  /** e.g. `K and V bits apart` */
  readonly label: string;
  /** e.g. `K 8 bits, V 4 bits` */
  readonly detail: string;
}

/** The label every surface puts in front of these: they are not transformers' behaviour. */
export const EXTENSIONS_HEADING = 'kvscope extensions (beyond transformers)';

/**
 * The extensions that change anything, in a fixed order; empty at neutral settings (equal K/V bits,
 * no sink, no rotation, no outliers, a layer map equal to the global bits), which run exactly the
 * transformers path. `numLayers` (when known) resolves the layer map against the global bits.
 */
export function activeExtensions(settings: QuantizedCacheSettings, numLayers?: number): ActiveExtension[] {
  const ext = settings.extensions;
  if (ext === undefined) return [];
  const active: ActiveExtension[] = [];
  const keyBits = ext.nbitsKey ?? settings.nbits;
  const valueBits = ext.nbitsValue ?? settings.nbits;
  if (keyBits !== settings.nbits || valueBits !== settings.nbits) {
    active.push({ id: 'kv-bits-apart', label: 'K and V bits apart', detail: `K ${keyBits} bits, V ${valueBits} bits` });
  }
  const differing = (ext.layerMap ?? []).filter((entry) => 'fullPrecision' in entry || entry.nbitsKey !== keyBits || entry.nbitsValue !== valueBits
    || entry.formatKey !== undefined || entry.formatValue !== undefined);
  if (differing.length > 0) {
    const full = differing.filter((entry) => 'fullPrecision' in entry).map((entry) => entry.layer);
    const own = differing.filter((entry): entry is Exclude<typeof entry, { fullPrecision: true }> => !('fullPrecision' in entry));
    const parts = [
      ...(own.length > 0 ? [own.map((entry) => `${entry.layer}: ${sideLabel('K', entry.nbitsKey, entry.formatKey)} ${sideLabel('V', entry.nbitsValue, entry.formatValue)}`).join(', ')] : []),
      ...(full.length > 0 ? [`full precision: ${formatLayerList(full)}`] : []),
    ];
    active.push({ id: 'layer-map', label: 'per-layer settings', detail: parts.join('; ') });
  }
  const first = ext.fullPrecisionFirstLayers ?? 0;
  const last = ext.fullPrecisionLastLayers ?? 0;
  if (first > 0 || last > 0) {
    const layers = numLayers === undefined ? '' : ` (${formatLayerList(fullPrecisionLayers(settings, numLayers))})`;
    active.push({ id: 'full-precision-layers', label: 'first/last layers in full precision', detail: `first ${first}, last ${last}${layers}` });
  }
  if ((ext.sinkTokens ?? 0) > 0) {
    active.push({ id: 'attention-sinks', label: 'attention sinks', detail: `first ${ext.sinkTokens} tokens of each layer in full precision, never re-quantized` });
  }
  if (ext.rotation !== undefined) {
    active.push({ id: 'rotation', label: 'rotation', detail: `${ext.rotation} along head_dim on ${ext.rotateValues === true ? 'keys and values' : 'keys'}` });
  }
  if (ext.outlierQuantile !== undefined) {
    active.push({ id: 'outliers', label: 'outliers', detail: `values above the ${ext.outlierQuantile} magnitude quantile kept exactly (dense-and-sparse)` });
  }
  const mapped = layerMapFormats(ext);
  if (ext.kvFormatKey === undefined && ext.kvFormatValue === undefined && mapped.length > 0) {
    // the layer map's own formats (its entries above say which layer and side takes which)
    active.push({
      id: 'kv-format', label: 'runtime KV format (write-once)',
      detail: `${mapped.join(', ')} in the layer map's layers: each row quantized once when written, no residual, no re-quantization` +
        `${ext.calculateKvScales === true ? ', per-tensor scales calculated from the prompt' : ''} (the other layers ${String(settings.backend)})`,
    });
  }
  if (ext.kvFormatKey !== undefined || ext.kvFormatValue !== undefined) {
    const same = ext.kvFormatKey === ext.kvFormatValue;
    active.push({
      id: 'kv-format', label: 'runtime KV format (write-once)',
      detail: `${same ? ext.kvFormatKey : `K ${ext.kvFormatKey ?? '?'}, V ${ext.kvFormatValue ?? '?'}`}: each row quantized once when written, ` +
        `no residual, no re-quantization${ext.calculateKvScales === true ? ', per-tensor scales calculated from the prompt' : ''} (replaces ${String(settings.backend)} ${settings.nbits}-bit)`,
    });
  }
  return active;
}

/**
 * The list in one line for headers, badges and table cells:
 * `K and V bits apart (K 8 bits, V 4 bits); attention sinks (first 4 tokens …)`; empty when none.
 */
export function formatActiveExtensions(active: readonly ActiveExtension[]): string {
  return active.map((item) => `${item.label} (${item.detail})`).join('; ');
}

function fullPrecisionLayers(settings: QuantizedCacheSettings, numLayers: number): number[] {
  return Array.from({ length: numLayers }, (_, layer) => layer).filter((layer) => layerBits(settings, layer, numLayers) === 'full-precision');
}

/** `K4`, or `K full` for a side the layer map keeps in full precision. */
function sideLabel(side: 'K' | 'V', bits: number | 'full' | undefined, format?: string): string {
  if (format !== undefined || bits === undefined) return `${side} ${format ?? '?'}`;
  return bits === 'full' ? `${side} full` : `${side}${bits}`;
}
