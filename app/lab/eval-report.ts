import { sessionComputeNote } from '../engine/session-compute.js';
import type { EvalResult } from './eval-result.js';
import type { EvalSummary } from './eval-summary.js';

/**
 * `kvscope eval`'s text report, laid out as llama.cpp's perplexity tool prints its KL-divergence mode
 * (a per-window table where llama.cpp prints running lines, then the final estimate on its own line,
 * then "Perplexity statistics", "KL divergence statistics" and "Token
 * probability statistics"), followed by the cache's memory and per-layer errors.
 */
export function formatEvalReport(result: EvalResult, describe: (bytes: number) => string): string {
  const s = result.summary;
  const q = result.settings.quantization;
  const cache = result.settings.cacheMode === 'dynamic'
    ? 'dynamic cache (full precision)'
    : `${q.backend} ${q.nbits}-bit, axes ${q.axisKey}/${q.axisValue}, group ${q.groupSize}, residual ${q.residualLength}`;
  const w = result.windows;
  const lines = [
    `kvscope eval: ${cache} on ${folderName(result.model.folder)}/${result.model.onnxFile}, text ${result.text.name} (${textTokens(result.text)})`,
    `  ${w.count} windows of ${w.context} tokens (stride ${w.stride}, prefill ${w.prefill}), ${s.tokens} predictions scored, ${result.executionProvider}, fed ${result.feed}` +
      `${result.reference.cached ? ', reference from the cache' : ''}`,
    ...referenceLines(result, describe),
    ...(result.dequantize === undefined ? [] : [`  dequantized ${result.dequantize === 'graph' ? 'inside the graph' : 'on the host'}${result.dequantizeReason === undefined ? '' : ` (${result.dequantizeReason})`}`]),
    ...result.extensions.map((e) => `  kvscope extension: ${e}`),
    ...sessionLines(result),
    '',
    // llama.cpp prints running estimates here ([1]…,[2]…, the last being the final one); this table
    // scores each window alone, so its header says so and the final estimate has a line of its own.
    `Per window (each window scored alone, not running totals as llama.cpp prints; the final estimate follows the table):`,
    'window          PPL           ln(PPL(Q)/PPL(base))        KL divergence              Δp RMS            Same top p',
    ...result.perWindow.map((window) => `${String(window.index + 1).padStart(4)}  ${windowLine(window.summary)}`),
    `Final estimate over all ${w.count} windows (${s.tokens} predictions): PPL(Q) = ${s.ppl.toFixed(4)} ± ${s.pplError.toFixed(4)}, ` +
      `mean KLD = ${s.kld.mean.toFixed(6)} ± ${s.kld.meanError.toFixed(6)}, same top p = ${(100 * s.top1Agreement).toFixed(3)} %`,
    '',
    '====== Perplexity statistics ======',
    `Mean PPL(Q)                   : ${f(s.ppl, 6, 10)} ± ${f(s.pplError, 6, 10)}`,
    `Mean PPL(base)                : ${f(s.pplReference, 6, 10)} ± ${f(s.pplReferenceError, 6, 10)}`,
    `Cor(ln(PPL(Q)), ln(PPL(base))): ${f(100 * s.pplCorrelation, 2, 6)}%`,
    `Mean ln(PPL(Q)/PPL(base))     : ${f(s.lnPplRatio, 6, 10)} ± ${f(s.lnPplRatioError, 6, 10)}`,
    `Mean PPL(Q)/PPL(base)         : ${f(s.pplRatio, 6, 10)} ± ${f(s.pplRatioError, 6, 10)}`,
    `Mean PPL(Q)-PPL(base)         : ${f(s.deltaPpl, 6, 10)} ± ${f(s.deltaPplError, 6, 10)}`,
    '',
    '====== KL divergence statistics ======',
    `Mean    KLD: ${f(s.kld.mean, 6, 10)} ± ${f(s.kld.meanError, 6, 10)}`,
    `Maximum KLD: ${f(s.kld.max, 6, 10)}`,
    `99.9%   KLD: ${f(s.kld.p999, 6, 10)}`,
    `99.0%   KLD: ${f(s.kld.p99, 6, 10)}`,
    `95.0%   KLD: ${f(s.kld.p95, 6, 10)}`,
    `90.0%   KLD: ${f(s.kld.p90, 6, 10)}`,
    `Median  KLD: ${f(s.kld.median, 6, 10)}`,
    `Minimum KLD: ${f(s.kld.min, 6, 10)}`,
    '',
    '====== Token probability statistics ======',
    `Mean    Δp: ${f(100 * s.deltaP.mean, 3, 6)} ± ${f(100 * s.deltaP.meanError, 3, 5)} %`,
    `Maximum Δp: ${f(100 * s.deltaP.max, 3, 6)}%`,
    `99.0%   Δp: ${f(100 * s.deltaP.p99, 3, 6)}%`,
    `Median  Δp: ${f(100 * s.deltaP.median, 3, 6)}%`,
    ` 1.0%   Δp: ${f(100 * s.deltaP.p1, 3, 6)}%`,
    `Minimum Δp: ${f(100 * s.deltaP.min, 3, 6)}%`,
    `RMS Δp    : ${f(100 * s.deltaP.rms, 3, 6)} ± ${f(100 * s.deltaP.rmsError, 3, 5)} %`,
    `Same top p: ${f(100 * s.top1Agreement, 3, 6)} ± ${f(100 * s.top1AgreementError, 3, 5)} %`,
    '',
    `KV cache at ${w.context} tokens: ${describe(result.memory.storedBytes)} stored, ${result.memory.bitsPerValue.toFixed(2)} bits/value ` +
      `(codes ${describe(result.memory.total.codeBytes)}, scale/zero ${describe(result.memory.total.metadataBytes)}, full precision ${describe(result.memory.total.fullPrecisionBytes)}) ` +
      `vs fp16 ${describe(result.memory.total.fp16BaselineBytes)}`,
  ];
  if (result.settings.cacheMode === 'quantized') {
    lines.push(`flushes per layer and window: ${result.flushCounts.map((n) => (n === null ? '-' : String(n))).join(' ')}`);
    const errors = result.layerErrors.map((e) => `${e.layer}: K ${e.key === null ? '-' : e.key.relFroErrMean.toExponential(2)} V ${e.value === null ? '-' : e.value.relFroErrMean.toExponential(2)}`);
    if (errors.length > 0) lines.push(`mean rel. error per layer (quantize events): ${errors.join(', ')}`);
  }
  const t = result.timings;
  lines.push(`${t.tokensFed} tokens in ${(t.evalMs / 1000).toFixed(2)} s (${t.tokensPerSecond.toFixed(0)} tok/s, ${t.runs} runs); reference ${(t.referenceMs / 1000).toFixed(2)} s, load ${(t.loadMs / 1000).toFixed(2)} s`);
  return lines.join('\n') + '\n';
}

function windowLine(s: EvalSummary): string {
  return `${f(s.ppl, 4, 9)} ± ${f(s.pplError, 4, 9)}    ${f(s.lnPplRatio, 5, 10)} ± ${f(s.lnPplRatioError, 5, 10)}    ${f(s.kld.mean, 5, 10)} ± ${f(s.kld.meanError, 5, 10)}    ` +
    `${f(100 * s.deltaP.rms, 3, 6)} ± ${f(100 * s.deltaP.rmsError, 3, 6)} %    ${f(100 * s.top1Agreement, 3, 7)} ± ${f(100 * s.top1AgreementError, 3, 6)} %`;
}

function f(value: number, digits: number, width: number): string {
  return value.toFixed(digits).padStart(width);
}

/** What this evaluation did to the reference cache: windows computed and the entry's size on disk, windows mended. */
function referenceLines(result: EvalResult, describe: (bytes: number) => string): string[] {
  const r = result.reference;
  const size = r.bytes === undefined ? '' : ` (${describe(r.bytes)} on disk, key ${r.key.slice(0, 12)})`;
  const lines = r.windowsComputed !== undefined && r.windowsComputed > 0
    ? [`  reference: ${r.windowsComputed} window${r.windowsComputed === 1 ? '' : 's'} computed and stored${size}`]
    : r.bytes === undefined ? [] : [`  reference: read from the cache${size}`];
  return [...lines, ...(r.notes ?? []).map((note) => `  ${note}`)];
}

function folderName(folder: string): string {
  const parts = folder.split(/[\\/]/).filter((part) => part !== '');
  return parts.at(-1) ?? folder;
}

/** The text's tokens as encoded: the whole text's, ids as given, or those of the prefix the windows cover. */
function textTokens(text: EvalResult['text']): string {
  if (text.tokenIds === true) return `${text.tokens} token ids`;
  if (text.tokenizedCharacters === undefined) return `${text.tokens} tokens`;
  const of = text.fileBytes === undefined ? `${text.characters} characters` : `a ${text.fileBytes}-byte file`;
  return `${text.tokens} tokens from its first ${text.tokenizedCharacters} characters of ${of}, what the windows cover`;
}

/** One line where the session computed otherwise than `kvscope eval` by default (a sweep job's unprepacked weights). */
function sessionLines(result: EvalResult): string[] {
  const note = sessionComputeNote(result.session);
  return note === null ? [] : [`  ${note}`];
}
