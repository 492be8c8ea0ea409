import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../app/cache/cache-config.js';
import type { RunSettings } from '../app/engine/types.js';
import { readModelFiles } from '../app/node/model/open-model.js';
import { releaseCachedSessions } from '../app/node/ort/session-cache.js';
import { resolveModelPath, runGeneration, type GenerationResult } from '../app/node/run-generation.js';
import { promptText, type GenerationJob, type GenerationSample } from './generation-job.js';
import { createMinimalSession, minimalGreedy } from './minimal-loop.js';

/**
 * One process of bench/generation.ts: runs the job given as JSON in argv[2] and prints one
 * GenerationSample as JSON on the last line of stdout. Progress and errors go to stderr.
 *
 * Run by hand: `npx tsx bench/generation-child.ts '{"engine":"minimal-loop","model":"synthetic",…}'`
 */
const job = JSON.parse(process.argv[2] ?? '') as GenerationJob;
const folder = await resolveModelPath(job.model);
const files = readModelFiles(folder);
const prompt = typeof job.prompt === 'string' ? job.prompt : promptText(job.prompt.tokens, files.tokenizer.encode);
const promptIds = files.tokenizer.encode(prompt);

const sample = job.engine === 'minimal-loop' ? await runMinimal() : await runKvscope();
await releaseCachedSessions();
process.stdout.write(`${JSON.stringify(sample)}\n`);

async function runKvscope(): Promise<GenerationSample> {
  const settings: RunSettings = {
    model: folder,
    executionProvider: 'cpu',
    cacheMode: job.engine === 'kvscope-quantized' ? 'quantized' : 'dynamic',
    quantization: job.quantization ?? DEFAULT_QUANTIZED_CACHE_SETTINGS,
    prompt,
    maxNewTokens: job.newTokens,
    sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 },
    reference: false,
  };
  await runGeneration({ ...settings, maxNewTokens: job.warmupNewTokens });
  const results: GenerationResult[] = [];
  for (let run = 0; run < job.timedRuns; run++) {
    const result = await runGeneration(settings);
    if (result.generatedTokenIds.length !== job.newTokens) {
      throw new Error(`kvscope stopped after ${result.generatedTokenIds.length} of ${job.newTokens} tokens (${result.stopReason}); the bench needs full-length runs.`);
    }
    results.push(result);
  }
  const decodeSteps = results.flatMap((r) => r.steps.slice(1));
  const mean = (pick: (t: GenerationResult['steps'][number]['timings']) => number): number =>
    decodeSteps.reduce((sum, step) => sum + pick(step.timings), 0) / Math.max(1, decodeSteps.length);
  const last = results[results.length - 1]!;
  return {
    decodeTokensPerSecond: results.map((r) => r.timings.decodeTokensPerSecond),
    promptTokens: last.promptTokenIds.length,
    tokenIds: [...results[0]!.generatedTokenIds],
    peakRssBytes: Math.max(...results.flatMap((r) => r.steps.map((step) => step.memory.rssBytes))),
    kvBytes: last.kvBytesTotal.totalBytes,
    kvFp16BaselineBytes: last.kvBytesTotal.fp16BaselineBytes,
    stepSplitMs: { dequantize: mean((t) => t.dequantizeMs), model: mean((t) => t.modelMs), quantize: mean((t) => t.quantizeMs), total: mean((t) => t.totalMs) },
  };
}

async function runMinimal(): Promise<GenerationSample> {
  const session = await createMinimalSession(files.onnxPath);
  try {
    await minimalGreedy(session, promptIds, job.warmupNewTokens);
    // rss sampled from outside the loop every 50 ms, as often as kvscope's throttled step samples
    let peakRssBytes = process.memoryUsage.rss();
    const timer = setInterval(() => { peakRssBytes = Math.max(peakRssBytes, process.memoryUsage.rss()); }, 50);
    const runs = [];
    try {
      for (let run = 0; run < job.timedRuns; run++) runs.push(await minimalGreedy(session, promptIds, job.newTokens));
    } finally {
      clearInterval(timer);
    }
    return {
      decodeTokensPerSecond: runs.map((r) => (1000 * r.decodeTokens) / r.decodeMs),
      promptTokens: promptIds.length,
      tokenIds: runs[0]!.tokenIds,
      peakRssBytes,
    };
  } finally {
    await session.release();
  }
}
