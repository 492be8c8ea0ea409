import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../app/cache/cache-config.js';
import type { RunSettings } from '../app/engine/types.js';
import { readModelFiles } from '../app/node/model/open-model.js';
import { releaseCachedSessions } from '../app/node/ort/session-cache.js';
import { resolveModelPath, runGeneration } from '../app/node/run-generation.js';
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
const files = await readModelFiles(folder);
if (files.tokenizer === null) throw new Error(`${folder} has no tokenizer.json; the generation bench encodes text prompts.`);
const tokenizer = files.tokenizer;
const prompt = typeof job.prompt === 'string' ? job.prompt : promptText(job.prompt.tokens, tokenizer.encode);
const promptIds = tokenizer.encode(prompt);
const warmupPrompt = job.warmupPromptTokens === undefined ? prompt : promptText(job.warmupPromptTokens, tokenizer.encode);

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
    ...(job.dequantize === undefined ? {} : { dequantize: job.dequantize }),
  };
  await runGeneration({ ...settings, prompt: warmupPrompt, maxNewTokens: job.warmupNewTokens });
  // Only summaries are kept between runs: a result's step metrics would grow the heap the next run collects.
  const rates: number[] = [];
  const split = { dequantize: 0, model: 0, quantize: 0, total: 0 };
  let decodeSteps = 0;
  let peakRssBytes = 0;
  let tokenIds: number[] = [];
  let kvBytes = 0;
  let kvFp16BaselineBytes = 0;
  for (let run = 0; run < job.timedRuns; run++) {
    const result = await runGeneration(settings);
    if (result.generatedTokenIds.length !== job.newTokens) {
      throw new Error(`kvscope stopped after ${result.generatedTokenIds.length} of ${job.newTokens} tokens (${result.stopReason}); the bench needs full-length runs.`);
    }
    rates.push(result.timings.decodeTokensPerSecond);
    for (const step of result.steps) {
      peakRssBytes = Math.max(peakRssBytes, step.memory.rssBytes);
      if (step.step === 0) continue;
      split.dequantize += step.timings.dequantizeMs;
      split.model += step.timings.modelMs;
      split.quantize += step.timings.quantizeMs;
      split.total += step.timings.totalMs;
      decodeSteps++;
    }
    if (run === 0) tokenIds = [...result.generatedTokenIds];
    kvBytes = result.kvBytesTotal.totalBytes;
    kvFp16BaselineBytes = result.kvBytesTotal.fp16BaselineBytes;
  }
  const perStep = (ms: number): number => ms / Math.max(1, decodeSteps);
  return {
    decodeTokensPerSecond: rates,
    promptTokens: promptIds.length,
    tokenIds,
    peakRssBytes,
    kvBytes,
    kvFp16BaselineBytes,
    stepSplitMs: { dequantize: perStep(split.dequantize), model: perStep(split.model), quantize: perStep(split.quantize), total: perStep(split.total) },
  };
}

async function runMinimal(): Promise<GenerationSample> {
  const session = await createMinimalSession(files.onnxPath);
  try {
    await minimalGreedy(session, tokenizer.encode(warmupPrompt), job.warmupNewTokens);
    // rss sampled from outside the loop every 250 ms, as often as kvscope's throttled step samples (app/engine/memory-sampler.ts)
    let peakRssBytes = process.memoryUsage.rss();
    const timer = setInterval(() => { peakRssBytes = Math.max(peakRssBytes, process.memoryUsage.rss()); }, 250);
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
