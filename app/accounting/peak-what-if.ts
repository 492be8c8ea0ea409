import { predictKvPeak, residualBufferRows, type KvPeak } from '../cache/kv-peak.js';
import { bytesPerElement } from '../tensor/kv-tensor.js';
import { estimateKvMemory, type WhatIfInput } from './memory-what-if.js';

/** The predicted KV-attributable peak of each way of running the cache (app/cache/kv-peak.ts). */
export interface PeakWhatIf {
  readonly dynamic: KvPeak;
  readonly host: KvPeak;
  readonly graph: KvPeak;
}

/**
 * The memory what-if's peaks: the stored bytes of memory-what-if.ts (the same formulas as a run's),
 * arranged as each path holds them during a decode step at the context length.
 */
export function estimateKvPeaks(input: Omit<WhatIfInput, 'cacheMode'>): PeakWhatIf {
  const dynamic = estimateKvMemory({ ...input, cacheMode: 'dynamic' });
  const quantized = estimateKvMemory({ ...input, cacheMode: 'quantized' });
  const quantizedRows = quantized.rows.filter((row) => row.plan === 'quantized');
  const quantizedLayers = quantizedRows.reduce((sum, row) => sum + row.layers.length, 0);
  // F: what the process holds of a full-precision history, i.e. what the graph is fed (a sliding
  // layer stores its window but is fed, and returns, its whole history: memory-what-if.ts `fedBytes`)
  const quantizedLayerSet = new Set(quantizedRows.flatMap((row) => row.layers));
  let full = 0;
  let quantizedFull = 0;
  for (const row of dynamic.rows) {
    const fed = row.perLayer === null ? 0 : (row.perLayer.fedBytes ?? row.perLayer.fullPrecisionBytes);
    full += row.layers.length * fed;
    quantizedFull += row.layers.filter((layer) => quantizedLayerSet.has(layer)).length * fed;
  }
  const { numKeyValueHeads, headDim } = input.config.geometry;
  const bytesPerValue = bytesPerElement(input.kvDtype);
  const decodeTokens = Math.max(0, input.contextLength - input.promptTokens);
  const residualCapacityBytes = quantizedLayers * 2 * numKeyValueHeads * headDim * bytesPerValue * residualBufferRows(input.settings.residualLength, decodeTokens);
  const common = { fullPrecisionBytes: full, quantizedFullPrecisionBytes: quantizedFull, quantizedLayers, stored: quantized.total, residualCapacityBytes, bytesPerValue };
  return {
    dynamic: predictKvPeak({ ...common, path: 'dynamic', quantizedFullPrecisionBytes: 0, quantizedLayers: 0 }),
    host: predictKvPeak({ ...common, path: 'host' }),
    graph: predictKvPeak({ ...common, path: 'graph' }),
  };
}
