import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../cache/cache-config.js';
import { EMPTY_LAYER_MEMORY } from '../cache/layer-memory.js';
import { formatEvalReport } from './eval-report.js';
import type { EvalResult } from './eval-result.js';
import { summarizeScores } from './eval-summary.js';
import type { TokenScores } from './token-scores.js';

/** One window's scores: `n` predictions with NLL `nll` (reference `base`), KLD `kld`, the top token agreeing `agree` of the time. */
function scores(n: number, nll: number, base: number, kld: number, agree: number): TokenScores {
  const spread = (v: number, i: number): number => v * (1 + 0.1 * Math.sin(i));
  return {
    nll: Float64Array.from({ length: n }, (_, i) => spread(nll, i)),
    nllReference: Float64Array.from({ length: n }, (_, i) => spread(base, i)),
    kld: Float64Array.from({ length: n }, (_, i) => spread(kld, i)),
    deltaP: Float64Array.from({ length: n }, (_, i) => 0.01 * Math.cos(i)),
    top1: Uint8Array.from({ length: n }, (_, i) => (i < agree * n ? 1 : 0)),
  };
}

function concat(parts: readonly TokenScores[]): TokenScores {
  const join = <T extends Float64Array | Uint8Array>(pick: (s: TokenScores) => T, make: (n: number) => T): T => {
    const out = make(parts.reduce((n, s) => n + pick(s).length, 0));
    let at = 0;
    for (const s of parts) { out.set(pick(s) as never, at); at += pick(s).length; }
    return out;
  };
  const f64 = (n: number): Float64Array => new Float64Array(n);
  return { nll: join((s) => s.nll, f64), nllReference: join((s) => s.nllReference, f64), kld: join((s) => s.kld, f64), deltaP: join((s) => s.deltaP, f64), top1: join((s) => s.top1, (n) => new Uint8Array(n)) };
}

function result(): EvalResult {
  // the first window is much worse than the last, so the last window alone is not the final estimate
  const windows = [scores(64, 2.2, 1.9, 0.08, 0.7), scores(64, 1.3, 1.25, 0.01, 0.95)];
  return {
    settings: {
      model: '/models/stories260k', executionProvider: 'cpu', cacheMode: 'quantized', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS,
      text: { name: 'tiny.txt' }, windows: { context: 128, stride: 128, prefill: 64, maxWindows: null },
    },
    model: { folder: '/models/stories260k', onnxFile: 'onnx/model.onnx', onnxSha256: 'a', configSha256: 'b', modelType: 'llama', numLayers: 5, kvDtype: 'float32', contentSha256: 'c' },
    text: { name: 'tiny.txt', sha256: 'd', characters: 1000, tokens: 256 },
    windows: { context: 128, stride: 128, prefill: 64, maxWindows: null, count: 2 },
    executionProvider: 'cpu', ortVersion: '1.30.0', reference: { key: 'k', cached: false },
    summary: summarizeScores(concat(windows)),
    perWindow: windows.map((w, index) => ({ index, start: index * 128, summary: summarizeScores(w) })),
    memory: { storedBytes: 1024, bitsPerValue: 4.5, total: EMPTY_LAYER_MEMORY, perLayer: [] },
    flushCounts: [1, 1, 1, 1, 1], layerErrors: [], extensions: [], preflightDiagnostics: [], feed: 'chunked',
    timings: { loadMs: 1, referenceMs: 1, evalMs: 1, runs: 2, tokensFed: 256, tokensPerSecond: 100 },
  };
}

describe('formatEvalReport', () => {
  it('labels its table "per window" (llama.cpp prints running totals there) and gives the final estimate on its own line', () => {
    const r = result();
    const lines = formatEvalReport(r, (bytes) => `${bytes} B`).split('\n');
    const header = lines.findIndex((line) => line.startsWith('window '));
    expect(lines[header - 1]).toMatch(/^Per window \(each window scored alone, not running totals as llama\.cpp prints/);
    const lastRow = lines[header + r.perWindow.length]!;
    expect(lastRow).toContain(r.perWindow[1]!.summary.ppl.toFixed(4));
    const final = lines[header + r.perWindow.length + 1]!;
    expect(final).toBe(`Final estimate over all 2 windows (128 predictions): PPL(Q) = ${r.summary.ppl.toFixed(4)} ± ${r.summary.pplError.toFixed(4)}, ` +
      `mean KLD = ${r.summary.kld.mean.toFixed(6)} ± ${r.summary.kld.meanError.toFixed(6)}, same top p = ${(100 * r.summary.top1Agreement).toFixed(3)} %`);
    // the reader who takes the last table row for the result would be wrong: the final estimate differs
    expect(r.summary.ppl.toFixed(4)).not.toBe(r.perWindow[1]!.summary.ppl.toFixed(4));
    expect(lines.find((line) => line.startsWith('Mean PPL(Q)'))).toContain(r.summary.ppl.toFixed(6));
  });
});
