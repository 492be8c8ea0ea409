import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../app/cache/cache-config.js';
import { defaultEvalText, DEFAULT_TEXT_NAME } from '../app/lab/default-text.js';
import type { EvalResult } from '../app/lab/eval-result.js';
import { defaultWindowSettings, type EvalSettings } from '../app/lab/eval-settings.js';
import { sharedDir } from '../app/node/golden.js';
import { runEval } from '../app/node/lab/run-eval.js';
import { ReferenceStore } from '../app/node/lab/reference-store.js';
import { releaseCachedSessions } from '../app/node/ort/session-cache.js';
import { ensureSyntheticModel } from '../app/node/synthetic/ensure-synthetic-model.js';
import { median } from './statistics.js';

/**
 * `kvscope eval` speed (issue 12's targets), measured in this process with the same warm session:
 * - chunked feeding (runs that end at flush steps, app/lab/chunk-plan.ts) against one token per run
 *   (what generation does), on stories260k and the synthetic 8-layer model at residual 128: at least
 *   5× the tokens per second, with PPL and mean KLD identical to 1e-5 relative;
 * - a sweep of K points costs at most (K + 1) × one evaluation: the reference is computed once and
 *   read from the cache afterwards, and the session stays warm (here: K evaluations after one that
 *   computed the reference, against K + 1 evaluations' time).
 * Each figure is the median of `rounds` alternating measurements. Run alone: `npx tsx bench/eval.ts`.
 */
const MIN_SPEEDUP = 5;
const MAX_RELATIVE_DIFFERENCE = 1e-5;

interface Case {
  readonly name: string;
  readonly settings: EvalSettings;
}

export interface EvalReport {
  readonly lines: string[];
  readonly misses: string[];
}

function settingsFor(model: string, quantization: QuantizedCacheSettings, maxWindows: number): EvalSettings {
  return {
    model, executionProvider: 'cpu', cacheMode: 'quantized', quantization,
    text: { name: DEFAULT_TEXT_NAME, content: defaultEvalText() }, windows: { ...defaultWindowSettings(), maxWindows },
  };
}

const relative = (a: number, b: number): number => (a === b ? 0 : Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b)));

export async function benchEval(rounds = 3): Promise<EvalReport> {
  const dir = mkdtempSync(join(tmpdir(), 'kvscope-bench-eval-'));
  const store = new ReferenceStore(dir);
  const misses: string[] = [];
  try {
    const synthetic = await ensureSyntheticModel('synthetic');
    const stories = join(sharedDir(), 'models', 'stories260k');
    const quanto = DEFAULT_QUANTIZED_CACHE_SETTINGS;
    const hqq: QuantizedCacheSettings = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, backend: 'hqq', axisKey: 1, axisValue: 1 };
    const cases: Case[] = [
      { name: 'stories260k, 10 windows of 512, quanto int4 g64 R128', settings: settingsFor(stories, quanto, 10) },
      { name: 'stories260k, 10 windows of 512, hqq int4 axis 1 g64 R128', settings: settingsFor(stories, hqq, 10) },
      { name: 'synthetic 8-layer, 2 windows of 512, quanto int4 g64 R128', settings: settingsFor(synthetic, quanto, 2) },
    ];
    const lines = [
      'kvscope bench: eval, chunked (runs ending at flush steps) vs one token per run (as generation feeds), same session, reference cached;',
      `tokens/s = tokens fed / evaluation time, median of ${rounds} alternating rounds.`,
      '| case | chunked tok/s | token-by-token tok/s | speed-up | runs | PPL rel. diff | mean KLD rel. diff | target |',
      '|---|---:|---:|---:|---|---:|---:|---|',
    ];
    for (const c of cases) {
      // The first evaluation computes the reference and warms the session.
      await runEval(c.settings, { referenceStore: store });
      const chunked: EvalResult[] = [];
      const single: EvalResult[] = [];
      for (let round = 0; round < rounds; round++) {
        chunked.push(await runEval(c.settings, { referenceStore: store }));
        single.push(await runEval({ ...c.settings, feed: 'token-by-token' }, { referenceStore: store }));
        process.stderr.write(`[eval] ${c.name} round ${round + 1}/${rounds}: ${chunked.at(-1)!.timings.tokensPerSecond.toFixed(0)} vs ${single.at(-1)!.timings.tokensPerSecond.toFixed(0)} tok/s\n`);
      }
      const fast = median(chunked.map((r) => r.timings.tokensPerSecond));
      const slow = median(single.map((r) => r.timings.tokensPerSecond));
      const speedup = fast / slow;
      const pplDiff = relative(chunked[0]!.summary.ppl, single[0]!.summary.ppl);
      const kldDiff = relative(chunked[0]!.summary.kld.mean, single[0]!.summary.kld.mean);
      const ok = speedup >= MIN_SPEEDUP && pplDiff <= MAX_RELATIVE_DIFFERENCE && kldDiff <= MAX_RELATIVE_DIFFERENCE;
      const label = `≥ ${MIN_SPEEDUP}× and ≤ ${MAX_RELATIVE_DIFFERENCE} rel.`;
      if (!ok) misses.push(`eval ${c.name}: ${label} (got ${speedup.toFixed(1)}×, PPL ${pplDiff.toExponential(1)}, KLD ${kldDiff.toExponential(1)})`);
      lines.push(`| ${c.name} | ${fast.toFixed(0)} | ${slow.toFixed(0)} | ${speedup.toFixed(1)}× | ${chunked[0]!.timings.runs} vs ${single[0]!.timings.runs} | ` +
        `${pplDiff.toExponential(1)} | ${kldDiff.toExponential(1)} | ${ok ? 'ok' : 'MISS'} ${label} |`);
    }
    lines.push('', ...(await sweepCost(store, settingsFor(stories, quanto, 10), rounds, misses)));
    return { lines, misses };
  } finally {
    await releaseCachedSessions();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** K points after the reference exists, against K + 1 single evaluations' time (each with its own reference lookup). */
async function sweepCost(store: ReferenceStore, base: EvalSettings, rounds: number, misses: string[]): Promise<string[]> {
  const points = [2, 4].flatMap((nbits) => [32, 64].map((groupSize) => ({ ...base, quantization: { ...base.quantization, nbits, groupSize } })));
  const k = points.length;
  const sweeps: number[] = [];
  const singles: number[] = [];
  for (let round = 0; round < rounds; round++) {
    // A cold reference (a store of its own), then the K points as a sweep runs them: one session, the reference read back.
    const fresh = new ReferenceStore(join(mkdtempSync(join(tmpdir(), 'kvscope-bench-sweep-')), 'refs'));
    const start = performance.now();
    for (const point of points) await runEval(point, { referenceStore: fresh });
    sweeps.push(performance.now() - start);
    const one = performance.now();
    await runEval(points[0]!, { referenceStore: store });
    singles.push(performance.now() - one);
  }
  const sweep = median(sweeps);
  const single = median(singles);
  const ok = sweep <= (k + 1) * single;
  const label = `sweep of ${k} ≤ ${k + 1} × one eval`;
  if (!ok) misses.push(`eval ${label} (got ${(sweep / single).toFixed(1)} evals)`);
  return [
    `| sweep (stories260k, quanto 2/4 × group 32/64, 10 windows) | ${k} points, cold reference | one eval (reference cached) | ratio | target |`,
    '|---|---:|---:|---:|---|',
    `| | ${(sweep / 1000).toFixed(2)} s | ${(single / 1000).toFixed(2)} s | ${(sweep / single).toFixed(2)} evals | ${ok ? 'ok' : 'MISS'} ${label} |`,
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const report = await benchEval();
  console.log(report.lines.join('\n'));
  console.log(report.misses.length === 0 ? 'all eval targets met' : `targets missed:\n  ${report.misses.join('\n  ')}`);
}
