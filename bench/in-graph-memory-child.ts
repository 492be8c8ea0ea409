import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../app/cache/cache-config.js';
import type { RunSettings, StepMetrics } from '../app/engine/types.js';
import { readModelFiles } from '../app/node/model/open-model.js';
import { releaseCachedSessions } from '../app/node/ort/session-cache.js';
import { resolveModelPath, runGeneration } from '../app/node/run-generation.js';
import { promptText } from './generation-job.js';
import { sumLayerMemory } from '../app/cache/layer-memory.js';
import type { Checkpoint, MemoryJob, MemorySample } from './in-graph-memory-job.js';
import { peakRssBytes } from './peak-rss.js';

function rate(list: readonly { readonly totalMs: number }[]): number {
  return list.length === 0 ? 0 : (1000 * list.length) / list.reduce((sum, s) => sum + s.totalMs, 0);
}

/**
 * One process of bench/in-graph-memory.ts: runs the job given as JSON in argv[2] in this process (no
 * worker thread, so ru_maxrss is the run's) and prints one MemorySample as JSON on the last line of
 * stdout. quanto 4-bit with transformers' defaults (group 64, residual 128), greedy, `ignoreEos`.
 *
 * By hand: `npx tsx bench/in-graph-memory-child.ts '{"kind":"decode","path":"graph","model":"synthetic-8b-kv","promptTokens":16,"newTokens":1008}'`
 */
const job = JSON.parse(process.argv[2] ?? '') as Exclude<MemoryJob, { kind: 'step' }>;
const folder = await resolveModelPath(job.model);
const files = await readModelFiles(folder);
const prompt = promptText(job.promptTokens, files.tokenizer!.encode);

const steps: { readonly step: number; readonly totalMs: number }[] = [];
const checkpoints: Checkpoint[] = [];
const trajectory: [number, number][] = [];
const wanted = new Set(job.kind === 'decode' ? job.checkpoints : []);
let capped = false;
const newTokens = job.kind === 'decode' ? job.newTokens : 1;
const settings: RunSettings = {
  model: folder,
  executionProvider: 'cpu',
  cacheMode: job.path === 'dynamic' ? 'dynamic' : 'quantized',
  quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS,
  prompt,
  maxNewTokens: newTokens,
  sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 },
  reference: false,
  ignoreEos: true,
  ...(job.path === 'dynamic' ? {} : { dequantize: job.path }),
};
const result = await runGeneration(settings, {
  onStep: (metrics: StepMetrics) => {
    steps.push({ step: metrics.step, totalMs: metrics.timings.totalMs });
    if (metrics.step % 32 === 0) trajectory.push([metrics.seqLength, peakRssBytes()]);
    if (wanted.has(metrics.seqLength)) {
      const total = sumLayerMemory(metrics.kvBytes);
      checkpoints.push({
        contextTokens: metrics.seqLength, peakRssBytes: peakRssBytes(),
        storedKvBytes: total.totalBytes, workingKvBytes: total.workingBytes, tailTokensPerSecond: rate(steps.filter((s) => s.step > 0).slice(-256)),
      });
    }
    // The cap is checked on the process's own peak at every step (getrusage: microseconds, next to a step of this model).
    if (job.kind === 'decode' && job.capBytes !== undefined && peakRssBytes() > job.capBytes) capped = true;
  },
  isCancelled: () => capped,
});
const decodeSteps = steps.filter((s) => s.step > 0);
const tail = decodeSteps.slice(-256);
const sample: MemorySample = {
  peakRssBytes: peakRssBytes(),
  endRssBytes: process.memoryUsage.rss(),
  contextTokens: result.promptTokenIds.length + result.generatedTokenIds.length - 1,
  newTokens: result.generatedTokenIds.length,
  decodeTokensPerSecond: rate(decodeSteps),
  tailTokensPerSecond: rate(tail),
  storedKvBytes: result.kvBytesTotal.totalBytes,
  workingKvBytes: result.kvBytesTotal.workingBytes,
  dequantize: result.dequantize ?? null,
  stopReason: result.stopReason,
  ...(job.kind === 'decode' && job.capBytes !== undefined ? { capped } : {}),
  checkpoints,
  trajectory,
  generatedTokenIds: result.generatedTokenIds.slice(0, 64),
};
await releaseCachedSessions();
process.stdout.write(`${JSON.stringify(sample)}\n`);
