import { inGraphSettingsReason } from '../../app/engine/in-graph-run.js';
import type { GenerationResult } from '../../app/engine/generation-result.js';
import type { DequantizePath, RunSettings } from '../../app/engine/types.js';

/** Where a run's cache is (or was) dequantized, in words for the header, tiles, History and Compare. */
export interface PathLabel {
  readonly path: DequantizePath;
  /** `in the graph`, `on the host` */
  readonly short: string;
  /** why this path: chosen, the default's choice, or the reason the graph could not run the settings */
  readonly why: string;
  /** false while only the settings are known (the engine decides the layout questions when it opens the graph) */
  readonly ran: boolean;
}

const SHORT: Readonly<Record<DequantizePath, string>> = { graph: 'in the graph', host: 'on the host' };

/**
 * The path a finished run took, from its result (`dequantize`, and the `dequantize-path` note the
 * engine writes when the default went to the host); null for a dynamic cache or a record from before
 * the path was recorded.
 */
export function ranPath(result: Pick<GenerationResult, 'dequantize' | 'diagnostics' | 'settings'>): PathLabel | null {
  const path = result.dequantize;
  if (path === undefined) return null;
  const note = result.diagnostics.find((d) => d.code === 'dequantize-path')?.message;
  const chosen = result.settings.dequantize !== undefined;
  const why = chosen ? 'chosen in the settings' : path === 'host' && note !== undefined ? note : 'the default: in the graph where the settings allow';
  return { path, short: SHORT[path], why, ran: true };
}

/**
 * The path a run will take, from its settings, before the engine says: an explicit choice is that
 * path (an impossible explicit `graph` is refused before Run); the default goes to the host when the
 * settings need it, by the engine's own rule (inGraphSettingsReason). Null for a dynamic cache.
 */
export function expectedPath(settings: RunSettings, numLayers: number | undefined): PathLabel | null {
  if (settings.cacheMode !== 'quantized') return null;
  if (settings.dequantize !== undefined) return { path: settings.dequantize, short: SHORT[settings.dequantize], why: 'chosen in the settings', ran: false };
  const layers = numLayers === undefined ? [] : Array.from({ length: numLayers }, (_, i) => i);
  const reason = inGraphSettingsReason(settings.quantization, layers, numLayers ?? 0);
  if (reason !== null) return { path: 'host', short: SHORT.host, why: `the graph path cannot: ${reason}`, ran: false };
  return { path: 'graph', short: SHORT.graph, why: 'the default: in the graph where the settings allow', ran: false };
}

/** `dequantized in the graph` / `dequantized on the host`, for a line of settings. */
export function pathWords(label: PathLabel): string {
  return `dequantized ${label.short}`;
}
