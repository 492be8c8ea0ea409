import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import { bitsPerValue } from '../cache/layer-memory.js';
import type { ModelConfig } from '../config/model-config.js';
import type { KvDtype } from '../tensor/kv-tensor.js';
import { estimateKvMemory } from './memory-what-if.js';
import { whatIfVerdict } from './what-if-verdict.js';

/** One context length of `kvscope preflight --context`: what the cache would hold there, or why there is no answer. */
export interface WhatIfLine {
  readonly contextLength: number;
  readonly promptTokens: number;
  /** the quantized cache's stored bytes (codes, scales and zeros, residual, extensions), all layers; null when refused */
  readonly quantizedBytes: number | null;
  /** a full-precision (dynamic) cache at the same length, sliding layers as transformers keeps them */
  readonly dynamicBytes: number;
  /** storage bits per cached value of the quantized cache; null when refused */
  readonly bitsPerValue: number | null;
  readonly quantizedTokens: number;
  readonly residualTokens: number;
  readonly flushes: number;
  /** why there is no estimate: the cache would refuse before it holds this length */
  readonly errors: readonly string[];
  readonly warnings: readonly string[];
}

/** The what-if at each length, from the same arithmetic and verdict as the run panel (memory-what-if.ts). */
export function whatIfLines(config: ModelConfig, settings: QuantizedCacheSettings, kvDtype: KvDtype, promptTokens: number, contexts: readonly number[]): WhatIfLine[] {
  return contexts.map((contextLength) => {
    const verdict = whatIfVerdict({ config, cacheMode: 'quantized', settings, contextLength, promptTokens });
    const dynamic = estimateKvMemory({ config, kvDtype, cacheMode: 'dynamic', settings, promptTokens, contextLength });
    const base = { contextLength, promptTokens, dynamicBytes: dynamic.total.totalBytes, warnings: verdict.warnings };
    const refused = { ...base, quantizedBytes: null, bitsPerValue: null, quantizedTokens: 0, residualTokens: 0, flushes: 0 };
    if (verdict.errors.length > 0) return { ...refused, errors: verdict.errors };
    const quantized = estimateKvMemory({ config, kvDtype, cacheMode: 'quantized', settings, promptTokens, contextLength });
    const rowErrors = quantized.rows.flatMap((row) => (row.error !== null ? [row.error] : []));
    if (rowErrors.length > 0) return { ...refused, errors: rowErrors };
    return {
      ...base, errors: [],
      quantizedBytes: quantized.total.totalBytes, bitsPerValue: bitsPerValue(quantized.total),
      quantizedTokens: quantized.quantizedTokens, residualTokens: quantized.residualTokens, flushes: quantized.flushes,
    };
  });
}

/** The text table `kvscope preflight --context` prints. */
export function formatWhatIfTable(lines: readonly WhatIfLine[], kvDtype: KvDtype, formatBytes: (bytes: number) => string): string[] {
  const out = [
    `Memory what-if (KV cache only, all layers, K and V in ${kvDtype}; a prompt of ${lines[0]?.promptTokens ?? 0} tokens, then one token a step):`,
    `  ${'context'.padStart(9)} | quantized cache | full precision | ratio | bits/value | quantized + residual tokens | flushes`,
  ];
  for (const line of lines) {
    const context = line.contextLength.toLocaleString('en-US').padStart(9);
    if (line.quantizedBytes === null || line.bitsPerValue === null) {
      out.push(`  ${context} | refused: ${line.errors[0]}`);
    } else {
      const ratio = line.quantizedBytes === 0 ? '–' : `${(line.dynamicBytes / line.quantizedBytes).toFixed(2)}×`;
      out.push(`  ${context} | ${formatBytes(line.quantizedBytes).padStart(15)} | ${formatBytes(line.dynamicBytes).padStart(14)} | ${ratio.padStart(5)} | ` +
        `${line.bitsPerValue.toFixed(2).padStart(10)} | ${`${line.quantizedTokens} + ${line.residualTokens}`.padStart(26)} | ${line.flushes}`);
    }
    for (const warning of line.warnings) out.push(`            note: ${warning}`);
  }
  return out;
}
