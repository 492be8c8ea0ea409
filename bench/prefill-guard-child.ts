import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../app/cache/cache-config.js';
import { prefillPeakBytes, prefillScoreBytes, KV_COPIES_AT_PEAK, LOGITS_COPIES_AT_PEAK, RUNTIME_BYTES_AT_PEAK } from '../app/engine/prefill-memory.js';
import { readModelFiles } from '../app/node/model/open-model.js';
import { prefillModelFacts, runGeneration } from '../app/node/run-generation.js';
import { disableOrtTelemetry } from '../app/node/worker/ort-telemetry.js';
import { peakRssBytes } from './peak-rss.js';

/**
 * One prefill of bench/prefill-guard.ts in a process of its own (its ru_maxrss is that run's alone):
 * `kvscope run --max-new-tokens 1` on `folder` with a prompt of `promptTokens` ids, on the derived
 * last-row graph (the run's default for a graph without num_logits_to_keep) or, with `everyRow`,
 * on the folder's graph as it is. Prints the prefill guard's estimate and its terms, the process's
 * resident memory before the model was read, and its peak.
 */
export interface PrefillGuardJob {
  readonly folder: string;
  readonly promptTokens: number;
  readonly everyRow: boolean;
}

export interface PrefillGuardResult {
  readonly vocabSize: number;
  readonly logitsRows: number;
  readonly estimateBytes: number;
  /** what a process grows by to run any model (app/engine/prefill-memory.ts RUNTIME_BYTES_AT_PEAK) */
  readonly runtimeBytes: number;
  readonly weightsBytes: number;
  readonly scoreBytes: number;
  readonly logitsBytes: number;
  readonly cacheBytes: number;
  readonly startRssBytes: number;
  readonly peakRssBytes: number;
}

const job = JSON.parse(process.argv[2] ?? '{}') as PrefillGuardJob;
disableOrtTelemetry();
const startRssBytes = process.memoryUsage().rss;
const files = await readModelFiles(job.folder);
const lastRows = !job.everyRow && files.analysis.logitsRows.kind === 'derived';
const facts = prefillModelFacts(files, lastRows);
if (facts === null) throw new Error(`${job.folder}: the header gave no I/O or vocabulary`);
const heads = files.config.geometry.numAttentionHeads;
const S = job.promptTokens;
const logitsRows = facts.logitsLastRowOnly ? 1 : S;
const result = await runGeneration({
  model: job.folder, executionProvider: 'cpu', cacheMode: 'dynamic', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS, prompt: '',
  promptTokenIds: Array.from({ length: S }, (_, i) => 300 + ((i * 7919) % 20_000)), maxNewTokens: 1,
  sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 }, reference: false,
}, {}, { everyLogitsRow: job.everyRow });
if (result.promptTokenIds.length !== S) throw new Error(`the run prefilled ${result.promptTokenIds.length} tokens, not ${S}`);
const out: PrefillGuardResult = {
  vocabSize: facts.vocabSize, logitsRows,
  estimateBytes: prefillPeakBytes(heads, S, facts),
  runtimeBytes: RUNTIME_BYTES_AT_PEAK,
  weightsBytes: facts.weightsBytes,
  scoreBytes: prefillScoreBytes(heads, S),
  logitsBytes: LOGITS_COPIES_AT_PEAK * logitsRows * facts.vocabSize * 4,
  cacheBytes: KV_COPIES_AT_PEAK * facts.kvBytesPerToken * S,
  startRssBytes, peakRssBytes: peakRssBytes(),
};
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0);
