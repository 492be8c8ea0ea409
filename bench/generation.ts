import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../app/cache/cache-config.js';
import { sharedDir } from '../app/node/golden.js';
import { ensureSyntheticModel } from '../app/node/synthetic/ensure-synthetic-model.js';
import { runChildJson } from './child-json.js';
import type { GenerationJob, GenerationSample } from './generation-job.js';
import { median } from './statistics.js';

/**
 * Generation speed and memory, measured like ../shared/reference/generation-speed.md measures its
 * peers: every figure comes from separate processes (bench/generation-child.ts), one warm-up and then
 * timed runs in each; the figure is the median over processes of each process's median run. Processes
 * differ by up to 13% on a quiet machine (far more on a shared one), so the variants of one case run
 * in alternation, round after round, and only ratios within a case are checked against targets.
 *
 * Decode tok/s = (new tokens − 1) / wall time from the first decode run to the end of the last, the
 * prefill excluded (kvscope's `timings.decodeTokensPerSecond`; the minimal loop times the same runs).
 *
 * Quantized cases (QuantizedCache, residual 128) decode 257 new tokens after a prompt of C − 257, so
 * the 256 decode runs see past lengths C − 256 … C − 1 (the context "near C"), and contain exactly
 * two residual flushes (updates 128 and 256), the steady-state rate of one per 128 tokens. Peak RSS
 * is the largest `steps[].memory.rssBytes` of the timed runs (sampled at most every 250 ms); stored KV
 * is `kvBytesTotal.totalBytes` at the end (codes + scale/zero + residual, in the graph's float32 for
 * the dynamic cache), against the same tokens in fp16.
 *
 * Run alone: `npx tsx bench/generation.ts` (`npm run bench` runs it after the quantizer tables).
 */

type Variant = { readonly name: string; readonly job: GenerationJob };

interface Case {
  readonly name: string;
  readonly variants: readonly Variant[];
  readonly processes: number;
}

export interface VariantFigures {
  readonly name: string;
  /** per process: the median of its timed runs */
  readonly processTokensPerSecond: number[];
  readonly tokensPerSecond: number;
  readonly samples: GenerationSample[];
}

export interface CaseFigures {
  readonly name: string;
  readonly variants: VariantFigures[];
}

export interface GenerationReport {
  readonly lines: string[];
  readonly misses: string[];
}

const STORIES = join(sharedDir(), 'models', 'stories260k');
const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'generation-child.ts');

/** The minimal loop must be matched: kvscope's full-precision decode at least 1.0× its speed. */
const MIN_DYNAMIC_VS_MINIMAL = 1.0;
/** The quantized cache (transformers' default settings) at 2,048 tokens: at least 0.8× the dynamic cache. */
const MIN_QUANTIZED_VS_DYNAMIC_2K = 0.8;

const QUANTO_DEFAULT: QuantizedCacheSettings = DEFAULT_QUANTIZED_CACHE_SETTINGS;
const HQQ_AXIS1: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', axisKey: 1, axisValue: 1 };
/** one residual cycle of decode runs per 128 tokens, twice (see the header) */
const QUANTIZED_NEW_TOKENS = 257;

function fullPrecisionCases(synthetic: string): Case[] {
  const cases: Case[] = [];
  if (existsSync(join(STORIES, 'onnx', 'model.onnx'))) {
    const job = { model: STORIES, prompt: 'Once upon a time', newTokens: 256, warmupNewTokens: 256, timedRuns: 3 } as const;
    cases.push({
      name: 'stories260k, "Once upon a time", 256 new',
      processes: 5,
      variants: [{ name: 'minimal loop', job: { ...job, engine: 'minimal-loop' } }, { name: 'kvscope dynamic', job: { ...job, engine: 'kvscope-dynamic' } }],
    });
  }
  const job = { model: synthetic, prompt: { tokens: 16 }, newTokens: 512, warmupNewTokens: 32, timedRuns: 1 } as const;
  cases.push({
    name: 'synthetic 8-layer, 16-token prompt, 512 new',
    processes: 5,
    variants: [{ name: 'minimal loop', job: { ...job, engine: 'minimal-loop' } }, { name: 'kvscope dynamic', job: { ...job, engine: 'kvscope-dynamic' } }],
  });
  return cases;
}

function quantizedCase(synthetic: string, context: number): Case {
  // A short warm-up (64-token prompt, 16 new: JIT, session, quantizer): the timed run's own prefill
  // grows ORT's arena to the long context and runs the quantizer over the whole prompt before any
  // decode step is timed, so a full-length warm-up would only add bench time.
  const job = {
    model: synthetic, prompt: { tokens: context - QUANTIZED_NEW_TOKENS }, newTokens: QUANTIZED_NEW_TOKENS,
    warmupNewTokens: 16, warmupPromptTokens: 64, timedRuns: 1,
  } as const;
  return {
    name: `synthetic 8-layer, context ${context - QUANTIZED_NEW_TOKENS + 1}…${context} (${context - QUANTIZED_NEW_TOKENS} + ${QUANTIZED_NEW_TOKENS})`,
    processes: 3,
    variants: [
      { name: 'dynamic', job: { ...job, engine: 'kvscope-dynamic' } },
      { name: 'quanto int4 axis 0/0 g64 R128', job: { ...job, engine: 'kvscope-quantized', quantization: QUANTO_DEFAULT } },
      { name: 'hqq int4 axis 1/1 g64 R128', job: { ...job, engine: 'kvscope-quantized', quantization: HQQ_AXIS1 } },
    ],
  };
}

/** Runs every case: variants alternate process by process, round after round. Progress on stderr. */
export async function measureGeneration(cases: readonly Case[]): Promise<CaseFigures[]> {
  const total = cases.reduce((sum, c) => sum + c.processes * c.variants.length, 0);
  let done = 0;
  const started = performance.now();
  const figures: CaseFigures[] = [];
  for (const c of cases) {
    const samples: GenerationSample[][] = c.variants.map(() => []);
    for (let round = 0; round < c.processes; round++) {
      for (const [index, variant] of c.variants.entries()) {
        const t0 = performance.now();
        const sample = await runChildJson<GenerationSample>(CHILD, variant.job);
        samples[index]!.push(sample);
        done++;
        process.stderr.write(`[generation ${done}/${total}, ${((performance.now() - started) / 1e3).toFixed(0)} s] ${c.name} · ${variant.name} · round ${round + 1}/${c.processes}: ` +
          `${sample.decodeTokensPerSecond.map((v) => v.toFixed(1)).join(', ')} tok/s (${((performance.now() - t0) / 1e3).toFixed(1)} s, load ${loadavg()[0]!.toFixed(1)})\n`);
      }
    }
    figures.push({
      name: c.name,
      variants: c.variants.map((variant, index) => {
        const processTokensPerSecond = samples[index]!.map((s) => median(s.decodeTokensPerSecond));
        return { name: variant.name, processTokensPerSecond, tokensPerSecond: median(processTokensPerSecond), samples: samples[index]! };
      }),
    });
  }
  return figures;
}

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(bytes >= 100 * 2 ** 20 ? 0 : 1)} MiB`;
const rate = (v: number): string => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
const spread = (f: VariantFigures): string => `${rate(f.tokensPerSecond)} (${rate(Math.min(...f.processTokensPerSecond))}–${rate(Math.max(...f.processTokensPerSecond))})`;
const peakRss = (f: VariantFigures): number => median(f.samples.map((s) => s.peakRssBytes));

function fullPrecisionTable(figures: readonly CaseFigures[], misses: string[]): string[] {
  const lines = [
    `| case | kvscope dynamic tok/s | minimal loop tok/s | ratio | kvscope ms/step: feeds / run / absorb | peak RSS kvscope | minimal | same tokens | target |`,
    '|---|---:|---:|---:|---|---:|---:|---|---|',
  ];
  for (const c of figures) {
    const minimal = c.variants.find((v) => v.name === 'minimal loop')!;
    const kvscope = c.variants.find((v) => v.name === 'kvscope dynamic')!;
    const ratio = kvscope.tokensPerSecond / minimal.tokensPerSecond;
    const ok = ratio >= MIN_DYNAMIC_VS_MINIMAL;
    const label = `kvscope dynamic ≥ ${MIN_DYNAMIC_VS_MINIMAL.toFixed(1)}× minimal loop`;
    if (!ok) misses.push(`generation ${c.name}: ${label} (got ${ratio.toFixed(2)}×)`);
    const same = kvscope.samples.every((s) => s.tokenIds.join() === minimal.samples[0]!.tokenIds.join());
    lines.push(`| ${c.name} | ${spread(kvscope)} | ${spread(minimal)} | ${ratio.toFixed(2)}× | ${stepSplit(kvscope)} | ` +
      `${mib(peakRss(kvscope))} | ${mib(peakRss(minimal))} | ${same ? 'yes' : 'NO'} | ${ok ? 'ok' : 'MISS'} ${label} |`);
  }
  return lines;
}

function stepSplit(f: VariantFigures): string {
  const splits = f.samples.map((s) => s.stepSplitMs).filter((s) => s !== undefined);
  if (splits.length === 0) return '–';
  const m = (pick: (s: NonNullable<GenerationSample['stepSplitMs']>) => number): string => median(splits.map(pick)).toFixed(2);
  return `${m((s) => s.dequantize)} / ${m((s) => s.model)} / ${m((s) => s.quantize)}`;
}

function quantizedTable(figures: readonly CaseFigures[], targetCase: string, misses: string[]): string[] {
  const lines = [
    '| context | cache | decode tok/s | vs dynamic | ms/step: feeds / run / absorb | peak RSS | vs dynamic | stored KV | fp16 baseline | KV vs fp16 | target |',
    '|---|---|---:|---:|---|---:|---:|---:|---:|---:|---|',
  ];
  for (const c of figures) {
    const dynamic = c.variants.find((v) => v.name === 'dynamic')!;
    for (const variant of c.variants) {
      const ratio = variant.tokensPerSecond / dynamic.tokensPerSecond;
      const kvBytes = median(variant.samples.map((s) => s.kvBytes ?? 0));
      const baseline = median(variant.samples.map((s) => s.kvFp16BaselineBytes ?? 0));
      let verdict = '';
      if (c.name === targetCase && variant.name.startsWith('quanto')) {
        const label = `quantized ≥ ${MIN_QUANTIZED_VS_DYNAMIC_2K}× dynamic at 2,048`;
        const ok = ratio >= MIN_QUANTIZED_VS_DYNAMIC_2K;
        if (!ok) misses.push(`generation ${c.name} ${variant.name}: ${label} (got ${ratio.toFixed(2)}×)`);
        verdict = `${ok ? 'ok' : 'MISS'} ${label}`;
      }
      lines.push(`| ${c.name} | ${variant.name} | ${spread(variant)} | ${variant === dynamic ? '' : `${ratio.toFixed(2)}×`} | ${stepSplit(variant)} | ` +
        `${mib(peakRss(variant))} | ${variant === dynamic ? '' : `${(peakRss(variant) / peakRss(dynamic)).toFixed(2)}×`} | ` +
        `${mib(kvBytes)} | ${mib(baseline)} | ${baseline > 0 ? `${(kvBytes / baseline).toFixed(2)}×` : ''} | ${verdict} |`);
    }
  }
  return lines;
}

/** Measures both figures and formats them; `misses` lists every target missed, in run.ts's format. */
export async function benchGeneration(): Promise<GenerationReport> {
  const loadBefore = loadavg();
  const started = performance.now();
  // Built (or checked) once here, so the child processes only open the folder.
  const synthetic = await ensureSyntheticModel('synthetic');
  const full = await measureGeneration(fullPrecisionCases(synthetic));
  const quantizedCases = [quantizedCase(synthetic, 512), quantizedCase(synthetic, 2048)];
  const quantized = await measureGeneration(quantizedCases);
  const loadAfter = loadavg();
  const misses: string[] = [];
  const lines = [
    'kvscope bench: generation on the CPU EP (onnxruntime-node), greedy, decode tok/s = (new − 1) / decode wall time;',
    'each figure: median over processes of each process\'s median timed run, (min–max over processes); variants alternate process by process.',
    `load average (1 min) ${loadBefore[0]!.toFixed(2)} before, ${loadAfter[0]!.toFixed(2)} after; ${((performance.now() - started) / 1e3).toFixed(0)} s.`,
    '',
    'Full precision vs the minimal onnxruntime-node loop (../shared/reference/generation-speed.md); stories260k: 5 processes × (1 warm-up + 3 timed),',
    'synthetic: 5 processes × (32-token warm-up + 1 timed). ms/step is kvscope\'s own StepTimings split, mean over decode steps.',
    'kvscope\'s sessions stop ORT\'s worker spinning between runs (session.force_spinning_stop) and run graphs of hidden size ≤ 128 on one',
    'intra-op thread (stories260k; app/node/ort); the minimal loop keeps ORT\'s defaults, as generation-speed.md measured it.',
    'kvscope frees each step\'s dead outputs at once (app/engine/output-release.ts) where the minimal loop leaves them to V8\'s GC,',
    'and runs without a text listener here (no detokenizing per step), like the minimal loop.',
    ...fullPrecisionTable(full, misses),
    '',
    `Quantized (transformers' default quanto settings; HQQ axis 1 for information) vs the dynamic cache: prompt C − ${QUANTIZED_NEW_TOKENS}, ${QUANTIZED_NEW_TOKENS} new,`,
    'so the 256 decode runs see a past of C − 256 … C − 1 and include 2 flushes; 3 processes × (64 + 16-token warm-up + 1 timed).',
    'Peak RSS: largest step memory sample of the timed run; stored KV: codes + scale/zero + residual (dynamic: the float32 history) vs the same tokens in fp16.',
    ...quantizedTable(quantized, quantizedCases[1]!.name, misses),
  ];
  return { lines, misses };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const report = await benchGeneration();
  console.log(report.lines.join('\n'));
  console.log(report.misses.length === 0 ? 'all generation targets met' : `targets missed:\n  ${report.misses.join('\n  ')}`);
}
