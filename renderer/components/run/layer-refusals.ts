import type { LayerMap } from '../../../app/cache/cache-extensions.js';
import type { Diagnostic, DiagnosticCode } from '../../../app/preflight/diagnostic.js';

/** The preflight's findings about the layer map's own entries (app/cache/extension-problems.ts): always a row's. */
const LAYER_MAP_CODES: readonly DiagnosticCode[] = ['invalid-layer-map', 'kv-format-refused', 'invalid-kv-format'];

/**
 * The preflight's refusals that belong on a row of the per-layer editor, by layer: the layer map's
 * own findings (a runtime refusing a format at this head_dim, in its words; bits the backend does not
 * store; a layer mixing a runtime format with the backend), and any other error whose layers are all
 * set by the map (e.g. HQQ refusing 3 bits on axis 1 in the map's 3-bit layers). An error about every
 * quantized layer under the global settings stays in the run check, not on each row.
 */
export function layerRefusals(diagnostics: readonly Diagnostic[], map: LayerMap | undefined): ReadonlyMap<number, readonly Diagnostic[]> {
  const set = new Set((map ?? []).map((entry) => entry.layer));
  const byLayer = new Map<number, Diagnostic[]>();
  for (const diagnostic of diagnostics) {
    if (diagnostic.severity !== 'error' || diagnostic.layers.length === 0) continue;
    const own = LAYER_MAP_CODES.includes(diagnostic.code) || diagnostic.layers.every((layer) => set.has(layer));
    if (!own) continue;
    for (const layer of diagnostic.layers) byLayer.set(layer, [...(byLayer.get(layer) ?? []), diagnostic]);
  }
  return byLayer;
}
