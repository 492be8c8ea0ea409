import { benchQuanto } from './quanto.js';
import { benchHqq } from './hqq.js';
import { benchGeneration } from './generation.js';
import { benchEval } from './eval.js';
import { benchStartLatency } from './start-latency.js';
import { benchInGraphMemory } from './in-graph-memory.js';
import { benchScale } from './scale.js';
import { benchCharts } from './charts.js';
import { benchWarmChanges } from './warm-changes.js';
import { benchAccounting } from './accounting.js';
import { benchPrefillGuard } from './prefill-guard.js';
import { benchProtocol } from './protocol.js';
import type { BenchRow } from './types.js';

/**
 * `npm run bench`: every speed and memory figure kvscope promises, measured in one run next to the
 * reference it must beat. Targets are checked here, never in timed tests.
 *
 * Quantizer targets (issue: the quantized-cache core), on a (1, 8, 4096, 128) float32 tensor:
 * quanto quantize ≥ 1,500 MB/s and dequantize ≥ 4,000 MB/s; HQQ quantize ≥ 90 MB/s (5× Python).
 *
 * Generation targets (bench/generation.ts, ../shared/reference/generation-speed.md), each a ratio to a
 * peer measured in the same run in alternating processes: kvscope's dynamic-cache decode ≥ 1.0× the
 * minimal onnxruntime-node loop (stories260k, synthetic 8-layer); the quantized cache with
 * transformers' default settings ≥ 0.8× the dynamic cache at 2,048 tokens of context.
 *
 * In-graph dequantization (bench/in-graph-memory.ts, on synthetic-8b-kv; long, each part runnable
 * alone): the graph path's KV-attributable peak ≥ 4× lower than the dynamic cache's at 2k and 4k, its
 * decode ≥ 0.6× the dynamic cache's at 2k, the what-if's peaks within 10% of the measured ones.
 * Eval targets (bench/eval.ts): chunked evaluation ≥ 5× one token per run on stories260k and the
 * synthetic model at residual 128, with identical results to 1e-5; a sweep of K points ≤ (K + 1) evals.
 * Scale (bench/scale.ts, issue 23, on synthetic-qwen2.5-0.5b): every path's peak RSS ≤ 1.15× a plain
 * onnxruntime-node loop's, eval at 6 windows ≤ 1.10× at 2, a cached-reference eval ≤ the loop + 1.5 GiB,
 * a 2,048-token prefill ≤ the 16-token run + 1.5 GiB, the reference ≤ ¼ of llama.cpp's bytes per token.
 * Start latency (bench/start-latency.ts): Run to the first streamed step on stories260k with the warm
 * worker that opening the model loaded, < 1 s, next to a worker started for the run; `warm`
 * (bench/warm-changes.ts): the same after changing bits, backend or model and back, each < 1 s.
 * Chart speed (bench/charts.ts, `npm run bench -- charts`): the live dashboard in Chromium while
 * 10,000 steps × 32 layers with the reference lane stream in: fps median ≥ 55, no frame over 50 ms,
 * the stream taken in within 1.25× its length.
 * Accounting (bench/accounting.ts): the memory what-if per edit at a 1M-token context < 5 ms.
 * Prefill guard (bench/prefill-guard.ts, issue 23 point 4): the guard's estimate against the measured
 * peak of one prefill, on two vocabularies: measured ≤ estimate ÷ PREFILL_MEMORY_SHARE on every run.
 * Protocol (bench/protocol.ts): reading 10,000 steps' metrics no slower than the hand readers zod replaced.
 */
interface Target { readonly label: string; readonly applies: (backend: string, row: BenchRow) => boolean; readonly check: (row: BenchRow) => number; readonly min: number }

const TARGETS: readonly Target[] = [
  { label: 'quanto quantize ≥ 1500 MB/s', applies: (b, r) => b === 'quanto' && r.referenceQuantizeMBps !== undefined, check: (r) => r.quantizeMBps, min: 1500 },
  { label: 'quanto dequantize ≥ 4000 MB/s', applies: (b, r) => b === 'quanto' && r.referenceDequantizeMBps !== undefined, check: (r) => r.dequantizeMBps, min: 4000 },
  { label: 'hqq quantize ≥ 90 MB/s', applies: (b) => b === 'hqq', check: (r) => r.quantizeMBps, min: 90 },
];

function fmt(v: number | undefined): string {
  return v === undefined ? '–' : v >= 100 ? v.toFixed(0) : v.toFixed(1);
}

function table(backend: string, rows: readonly BenchRow[]): { lines: string[]; misses: string[] } {
  const lines = [
    `| ${backend} | quantize MB/s | Python | ratio | dequantize MB/s | Python | ratio | targets |`,
    '|---|---:|---:|---:|---:|---:|---:|---|',
  ];
  const misses: string[] = [];
  for (const row of rows) {
    const verdicts = TARGETS.filter((t) => t.applies(backend, row)).map((t) => {
      const ok = t.check(row) >= t.min;
      if (!ok) misses.push(`${backend} ${row.name}: ${t.label} (got ${fmt(t.check(row))})`);
      return `${ok ? 'ok' : 'MISS'} ${t.label}`;
    });
    const ratio = (v: number, r: number | undefined): string => (r === undefined ? '' : `${(v / r).toFixed(1)}×`);
    lines.push(`| ${row.name} | ${fmt(row.quantizeMBps)} | ${fmt(row.referenceQuantizeMBps)} | ${ratio(row.quantizeMBps, row.referenceQuantizeMBps)} | ` +
      `${fmt(row.dequantizeMBps)} | ${fmt(row.referenceDequantizeMBps)} | ${ratio(row.dequantizeMBps, row.referenceDequantizeMBps)} | ${verdicts.join('; ')} |`);
  }
  return { lines, misses };
}

/**
 * Parts to run (`npm run bench -- generation eval`); all of them without arguments. The in-graph
 * part takes hours on a 2-core machine, so a shorter run names the others.
 */
const PARTS = ['quantizers', 'generation', 'in-graph', 'start', 'warm', 'eval', 'scale', 'prefill-guard', 'charts', 'accounting', 'protocol'] as const;
type Part = (typeof PARTS)[number];
const asked = process.argv.slice(2);
const unknown = asked.filter((part) => !(PARTS as readonly string[]).includes(part));
if (unknown.length > 0) {
  console.error(`npm run bench: unknown part(s) ${unknown.join(', ')}; the parts are ${PARTS.join(', ')} (none named: all of them).`);
  process.exit(2);
}
const runs = (part: Part): boolean => asked.length === 0 || asked.includes(part);
if (asked.length > 0) console.log(`parts run: ${PARTS.filter(runs).join(', ')} (of ${PARTS.join(', ')})\n`);

const misses: string[] = [];
if (runs('quantizers')) {
  console.log('kvscope bench: quantizer throughput on (1, 8, 4096, 128) float32, MB/s of float32 input (median of timed calls)');
  console.log('Python reference: ../shared/golden/throughput.json (median of its faster run)\n');
  for (const [backend, run] of [['quanto', benchQuanto], ['hqq', benchHqq]] as const) {
    const result = table(backend, await run());
    console.log(result.lines.join('\n') + '\n');
    misses.push(...result.misses);
  }
}
/** The parts after the quantizers, each a report of lines and missed targets, with the progress line it starts with. */
const REPORTS: readonly (readonly [Part, string | null, () => Promise<{ readonly lines: readonly string[]; readonly misses: readonly string[] }>])[] = [
  ['generation', 'generation bench: a few minutes; progress below', benchGeneration],
  ['in-graph', 'in-graph dequantization bench: hours on a 2-core machine (parts: npx tsx bench/in-graph-memory.ts layers|speed|prefill|decode)', () => benchInGraphMemory()],
  ['start', null, benchStartLatency],
  ['warm', null, benchWarmChanges],
  ['eval', 'eval bench: a few minutes; progress below', benchEval],
  ['scale', 'scale bench (synthetic-qwen2.5-0.5b, 2 GB of weights): a quarter of an hour on 2 cores; progress below', benchScale],
  ['prefill-guard', 'prefill guard bench (the 0.5B and 8B-KV geometries, a process of up to 5 GB per prefill): about ten minutes on 2 cores', benchPrefillGuard],
  ['charts', 'chart speed bench: builds the fake-engine UI, then two runs in Chromium (about a minute)', benchCharts],
  ['accounting', null, benchAccounting],
  ['protocol', null, () => Promise.resolve(benchProtocol())],
];
for (const [part, progress, run] of REPORTS) {
  if (!runs(part)) continue;
  if (progress !== null) console.error(progress);
  const report = await run();
  console.log(report.lines.join('\n') + '\n');
  misses.push(...report.misses);
}
console.log(misses.length === 0 ? `all targets met${asked.length > 0 ? ' (of the parts run)' : ''}` : `targets missed:\n  ${misses.join('\n  ')}`);
