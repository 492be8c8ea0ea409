import { pathToFileURL } from 'node:url';
import { parseWorkerMessage } from '../app/protocol/parse-message.js';
import type { MetricsMessage, TextMessage } from '../app/protocol/messages.js';
import { StreamBatcher } from '../app/protocol/stream-batcher.js';
import type { StepMetrics } from '../app/engine/types.js';
import { median } from './statistics.js';

/**
 * The worker protocol's hot path (issue 26: the messages declared once, with zod): a host reads every
 * `metrics` batch a generation worker posts, so reading 10,000 steps must not be slower than the hand
 * readers it replaced. Steps as a 24-layer model's (kvBytes per layer, a flush every 64 steps, the
 * reference lane on), in batches of 100 as the batcher posts them on a fast model, through structured
 * clone as worker_threads delivers them; and the batcher itself taking the 10,000 steps. Medians of 9
 * timed rounds after 3 warm-ups. `npm run bench -- protocol`, or alone `npx tsx bench/protocol.ts`.
 */
const STEPS = 10_000;
/**
 * The hand readers read the same 10,000 steps in 1,558–2,268 ms on the project's 2-core machine
 * (issue 26's note, old and new alternating; the zod readers 748–966 ms): the target is the fastest of them.
 */
const HAND_READERS_MS = 1_558;
const BATCH = 100;
const LAYERS = 24;

function layerMemory(tokens: number): NonNullable<StepMetrics['kvBytes'][number]> {
  const valueCount = 2 * 128 * 8 * tokens;
  return {
    tokens, quantizedTokens: tokens - (tokens % 64), fullPrecisionTokens: tokens % 64, valueCount, codeBytes: valueCount / 2, metadataBytes: valueCount / 16,
    fullPrecisionBytes: (tokens % 64) * 2 * 128 * 8 * 4, totalBytes: valueCount, fp16BaselineBytes: valueCount * 2, fp32BaselineBytes: valueCount * 4, workingBytes: 0,
  };
}

function step(index: number): StepMetrics {
  const errors = { relFroErr: 0.01, maxAbsErr: 0.1, meanAbsErr: 0.01, snrDb: 40 };
  return {
    step: index, tokenId: 400 + (index % 1000), seqLength: 16 + index,
    timings: { dequantizeMs: 0.1, modelMs: 1.2, quantizeMs: 0.3, referenceMs: 1.1, totalMs: 1.6 },
    tokensPerSecond: 600,
    kvBytes: Array.from({ length: LAYERS }, (_, layer) => layerMemory(16 + index + layer)),
    materializedKvBytes: 1_000_000,
    flushes: index % 64 === 0 ? Array.from({ length: LAYERS }, (_, layer) => ({ layer, kind: 'flush' as const, tokens: 64, key: errors, value: { ...errors, snrDb: Infinity } })) : [],
    memory: { rssBytes: 300_000_000, externalBytes: 1_000_000, arrayBuffersBytes: 1_000_000 },
    reference: { klDivergence: 0.001, top1Agrees: true, referenceTokenId: 400 },
  };
}

function timed(round: () => void): number {
  for (let i = 0; i < 3; i++) round();
  const times: number[] = [];
  for (let i = 0; i < 9; i++) {
    const started = performance.now();
    round();
    times.push(performance.now() - started);
  }
  return median(times);
}

export function benchProtocol(): { lines: string[]; misses: string[] } {
  const steps = Array.from({ length: STEPS }, (_, i) => step(i));
  const batches = Array.from({ length: STEPS / BATCH }, (_, b) => structuredClone({ type: 'metrics', id: 1, steps: steps.slice(b * BATCH, (b + 1) * BATCH) }));

  let parsedSteps = 0;
  const parseMs = timed(() => {
    parsedSteps = 0;
    for (const batch of batches) {
      const message = parseWorkerMessage(batch);
      if (message.type === 'metrics') parsedSteps += message.steps.length;
    }
  });
  if (parsedSteps !== STEPS) throw new Error(`read ${parsedSteps} steps of ${STEPS}`);

  let posted = 0;
  const clock = { now: () => 0, schedule: () => () => undefined };
  const batchMs = timed(() => {
    posted = 0;
    const batcher = new StreamBatcher(1, (message: TextMessage | MetricsMessage) => { if (message.type === 'metrics') posted += message.steps.length; }, clock, { intervalMs: 80, maxSteps: BATCH });
    for (const metrics of steps) {
      batcher.addText('a', metrics.tokenId);
      batcher.addStep(metrics);
    }
    batcher.flush();
  });
  if (posted !== STEPS) throw new Error(`the batcher posted ${posted} steps of ${STEPS}`);

  const ok = parseMs <= HAND_READERS_MS;
  const lines = [
    `reading ${STEPS.toLocaleString('en')} step metrics (${LAYERS} layers, batches of ${BATCH}): ${parseMs.toFixed(1)} ms (${(parseMs * 1000 / STEPS).toFixed(2)} µs a step); ` +
      `${ok ? 'ok' : 'MISS'} ≤ ${HAND_READERS_MS.toLocaleString('en')} ms (the hand readers it replaced)`,
    `the stream batcher taking ${STEPS.toLocaleString('en')} steps and their text: ${batchMs.toFixed(2)} ms`,
  ];
  return { lines, misses: ok ? [] : [`protocol: reading ${STEPS.toLocaleString('en')} step metrics took ${parseMs.toFixed(0)} ms (target ≤ ${HAND_READERS_MS.toLocaleString('en')} ms, the hand readers it replaced)`] };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const report = benchProtocol();
  console.log(report.lines.join('\n'));
  if (report.misses.length > 0) console.log(`targets missed:\n  ${report.misses.join('\n  ')}`);
}
