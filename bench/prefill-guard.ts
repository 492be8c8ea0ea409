import { cpSync, existsSync, linkSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { encodeModel } from '../app/onnx/onnx-model.js';
import { ensureSyntheticModel } from '../app/node/synthetic/ensure-synthetic-model.js';
import { buildLlamaModel } from '../app/synthetic/llama-graph.js';
import { scaleWeightPlan } from '../app/synthetic/scale-weights.js';
import type { ScaleModelKind } from '../app/synthetic/scale-specs.js';
import { PREFILL_MEMORY_SHARE } from '../app/engine/prefill-memory.js';
import { SYNTHETIC_DATA_PATH, SYNTHETIC_ONNX_PATH } from '../app/synthetic/synthetic-model.js';
import { syntheticModelSpec } from '../app/synthetic/synthetic-spec.js';
import { syntheticTokenizer } from '../app/synthetic/synthetic-tokenizer.js';
import { runChildJson } from './child-json.js';
import type { PrefillGuardJob, PrefillGuardResult } from './prefill-guard-child.js';

/**
 * The prefill guard's estimate (app/engine/prefill-memory.ts) against the measured peak (issue 23,
 * point 4): `npm run bench -- prefill-guard`, or alone `npx tsx bench/prefill-guard.ts`
 * (KVSCOPE_CACHE_DIR names where the models are built).
 * Each scale model is made a user model without num_logits_to_keep (its graph as the synthetic
 * builder writes it before keepLogitsRows, its data file hard-linked), then prefilled by
 * `kvscope run --max-new-tokens 1` in a process of its own, on the graph a run derives (one logits
 * row) and on the graph as it is (every row). The measured growth is the peak RSS less the process's
 * RSS before the model was read; the estimate is what the guard adds up for the same run.
 * PREFILL_GUARD_JOBS: `model:tokens:rows` items to run (default: the table below).
 *
 * Target: every run fits the guard's margin, and runs on at least two vocabulary sizes show it. The
 * guard admits a prefill whose estimate is at most PREFILL_MEMORY_SHARE of the free memory, so a run
 * it only just admits fits the machine when the measured growth is at most estimate ÷ share
 * (1.33× at 75%); a measured growth past that is a run the guard could let into an OOM kill.
 */
const MODELS: readonly ScaleModelKind[] = ['synthetic-qwen2.5-0.5b', 'synthetic-8b-kv-128k'];
/** Every row at 2,048 tokens on the Qwen geometry is about 6.5 GB: past what one process may take on the shared machine, so 1,024 stands in. */
const DEFAULT_JOBS = [
  'synthetic-qwen2.5-0.5b:16:last', 'synthetic-qwen2.5-0.5b:2048:last', 'synthetic-qwen2.5-0.5b:16:every', 'synthetic-qwen2.5-0.5b:1024:every',
  'synthetic-8b-kv-128k:16:last', 'synthetic-8b-kv-128k:2048:last', 'synthetic-8b-kv-128k:16:every', 'synthetic-8b-kv-128k:2048:every',
];

async function userModel(kind: ScaleModelKind): Promise<string> {
  const source = await ensureSyntheticModel(kind);
  const folder = join(source, '..', `${kind}-without-logits-input`);
  if (existsSync(join(folder, SYNTHETIC_ONNX_PATH))) return folder;
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(join(folder, 'onnx'), { recursive: true });
  for (const file of ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json']) cpSync(join(source, file), join(folder, file));
  linkSync(join(source, SYNTHETIC_DATA_PATH), join(folder, SYNTHETIC_DATA_PATH));
  const spec = syntheticModelSpec(kind);
  const plan = scaleWeightPlan(spec, syntheticTokenizer(spec).mutedTokenIds);
  writeFileSync(join(folder, SYNTHETIC_ONNX_PATH), encodeModel(buildLlamaModel(spec, plan.weights)));
  return folder;
}

const gib = (bytes: number): string => `${(bytes / 1024 ** 3).toFixed(2)}`;
/** The measured growth a run may reach past its estimate and still fit where the guard only just admits it. */
const MARGIN = 1 / PREFILL_MEMORY_SHARE;

function parseJobs(items: readonly string[]): { model: ScaleModelKind; tokens: number; everyRow: boolean }[] {
  return items.map((item) => {
    const [model, tokens, rows] = item.split(':');
    if (!MODELS.includes(model as ScaleModelKind) || !(Number(tokens) > 0) || (rows !== 'last' && rows !== 'every')) {
      throw new Error(`PREFILL_GUARD_JOBS: not a job: ${item} (write model:tokens:last|every, models ${MODELS.join(', ')})`);
    }
    return { model: model as ScaleModelKind, tokens: Number(tokens), everyRow: rows === 'every' };
  });
}

export async function benchPrefillGuard(): Promise<{ lines: string[]; misses: string[] }> {
  const jobs = parseJobs(process.env['PREFILL_GUARD_JOBS']?.split(',') ?? DEFAULT_JOBS);
  const lines = [
    `prefill guard: its estimate against the measured peak (kvscope run --max-new-tokens 1, a process each), GiB; target: measured ≤ estimate × ${MARGIN.toFixed(2)} (the guard takes ${PREFILL_MEMORY_SHARE * 100}% of free memory) on every run, on at least two vocabularies`,
    '| model (vocab) | prompt | logits rows | runtime | weights | scores | logits | cache | estimate | measured (peak − start) | peak RSS | measured / estimate | target |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  ];
  const misses: string[] = [];
  const vocabularies = new Set<number>();
  for (const { model, tokens, everyRow } of jobs) {
    const job: PrefillGuardJob = { folder: await userModel(model), promptTokens: tokens, everyRow };
    const r = await runChildJson<PrefillGuardResult>('bench/prefill-guard-child.ts', job);
    const measured = r.peakRssBytes - r.startRssBytes;
    const ratio = measured / r.estimateBytes;
    const ok = ratio <= MARGIN;
    if (ok) vocabularies.add(r.vocabSize);
    else misses.push(`prefill guard ${model}, ${tokens} tokens, ${everyRow ? 'every' : 'one'} logits row: measured ${gib(measured)} GiB, ${ratio.toFixed(2)}× the estimate ${gib(r.estimateBytes)} GiB (target ≤ ${MARGIN.toFixed(2)}×)`);
    lines.push(`| ${model} (${r.vocabSize.toLocaleString('en')}) | ${tokens} | ${r.logitsRows} | ${gib(r.runtimeBytes)} | ${gib(r.weightsBytes)} | ${gib(r.scoreBytes)} | ${gib(r.logitsBytes)} | ` +
      `${gib(r.cacheBytes)} | ${gib(r.estimateBytes)} | ${gib(measured)} | ${gib(r.peakRssBytes)} | ${ratio.toFixed(2)} | ${ok ? 'ok' : 'MISS'} ≤ ${MARGIN.toFixed(2)} |`);
  }
  if (vocabularies.size < 2) misses.push(`prefill guard: within its margin on ${vocabularies.size} vocabulary size(s) (target: at least two; PREFILL_GUARD_JOBS may have named one model)`);
  return { lines, misses };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const report = await benchPrefillGuard();
  console.log(report.lines.join('\n'));
  if (report.misses.length > 0) console.log(`targets missed:\n  ${report.misses.join('\n  ')}`);
}
