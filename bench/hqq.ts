import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { goldenPath, hasShared } from '../app/node/golden.js';
import { createWasmThreadPool } from '../app/node/wasm-thread-pool.js';
import { hqqQuantizer, quantizeHqq, setHqqThreadPool } from '../app/quant/hqq/hqq.js';
import { hqqKernels } from '../app/quant/hqq/kernels.js';
import type { EngineName } from '../app/quant/hqq/optimizer.js';
import { normalSamples } from '../app/quant/hqq/normal-samples.js';
import { kvTensor } from '../app/tensor/kv-tensor.js';
import type { KvShape } from '../app/tensor/kv-tensor.js';
import type { BenchRow } from './types.js';
import { median } from './statistics.js';

/**
 * Throughput of the HQQ port on the reference workload of ../shared/golden/throughput.json: a
 * (1, 8, 4096, 128) float32 N(0, 1) tensor, group size 64. MB/s = 16,777,216 input bytes / seconds
 * / 1e6. Quantize is the whole transformers call (validation, optimizer, packing, scale/zero cast);
 * dequantize writes into a preallocated output (`dequantizeInto`, as the cache uses it). Each figure
 * is the median of timed calls in interleaved rounds after warm-up calls, like the Python reference.
 * The reference figure is the faster of its two runs (A, B). Like the reference (torch with 2 threads),
 * the optimizer runs on 2 threads: this one and a worker_threads helper (app/node/wasm-thread-pool.ts).
 *
 * Run: `npx tsx bench/hqq.ts` (`--threads=1` for the optimizer on this thread only)
 */
interface Config { readonly nbits: 2 | 4 | 8; readonly axis: 0 | 1; readonly groupSize: number }

const SHAPE: KvShape = [1, 8, 4096, 128];
const CONFIGS: readonly Config[] = [
  { nbits: 4, axis: 0, groupSize: 64 },
  { nbits: 4, axis: 1, groupSize: 64 },
  { nbits: 2, axis: 0, groupSize: 64 },
  { nbits: 2, axis: 1, groupSize: 64 },
  { nbits: 8, axis: 0, groupSize: 64 },
  { nbits: 8, axis: 1, groupSize: 64 },
];
const WARMUP_CALLS = 2;
const ROUNDS = 5;
const QUANTIZE_CALLS_PER_ROUND = 2;
const DEQUANTIZE_CALLS_PER_ROUND = 5;

interface ReferenceSummary {
  readonly backend: string;
  readonly nbits: number;
  readonly axis: number;
  readonly group_size: number;
  readonly optimize?: boolean;
  readonly quantize_median_MB_per_s: readonly number[];
  readonly dequantize_median_MB_per_s?: readonly number[];
}

function configName(c: { nbits: number; axis: number; groupSize: number }): string {
  return `hqq ${c.nbits}-bit axis ${c.axis} g${c.groupSize}`;
}

function referenceFigures(): Map<string, { quantize: number; dequantize: number | undefined }> {
  const figures = new Map<string, { quantize: number; dequantize: number | undefined }>();
  if (!hasShared()) return figures;
  const json = JSON.parse(readFileSync(goldenPath('throughput.json'), 'utf8')) as { summary: ReferenceSummary[] };
  for (const row of json.summary) {
    if (row.backend !== 'hqq' || row.optimize === false) continue;
    figures.set(configName({ nbits: row.nbits, axis: row.axis, groupSize: row.group_size }), {
      quantize: Math.max(...row.quantize_median_MB_per_s),
      dequantize: row.dequantize_median_MB_per_s === undefined ? undefined : Math.max(...row.dequantize_median_MB_per_s),
    });
  }
  return figures;
}

function seconds(run: () => unknown): number {
  const t0 = performance.now();
  run();
  return (performance.now() - t0) / 1e3;
}

export interface HqqBenchOptions {
  /** optimizer threads: 2 (default, a worker_threads helper) or 1 */
  readonly threads?: 1 | 2;
}

export async function benchHqq(options: HqqBenchOptions = {}): Promise<BenchRow[]> {
  const threads = options.threads ?? 2;
  setHqqThreadPool(threads === 2 ? createWasmThreadPool(1) : null);
  try {
    return await benchRows(threads === 2 && hqqKernels()?.startHelpers() === true ? 2 : 1);
  } finally {
    setHqqThreadPool(null);
  }
}

async function benchRows(threads: number): Promise<BenchRow[]> {
  const input = kvTensor(SHAPE, 'float32', normalSamples(SHAPE.reduce((a, b) => a * b, 1), 20251201));
  const bytes = input.data.byteLength;
  const out = new Float32Array(input.data.length);
  const quantized = CONFIGS.map((c) => hqqQuantizer.quantize(input, c));
  const quantizeSeconds: number[][] = CONFIGS.map(() => []);
  const dequantizeSeconds: number[][] = CONFIGS.map(() => []);
  const engines: EngineName[] = [];
  for (let w = 0; w < WARMUP_CALLS; w++) {
    CONFIGS.forEach((c, i) => {
      engines[i] = quantizeHqq(input, c).engine;
      hqqQuantizer.dequantizeInto(quantized[i]!, out);
    });
  }
  for (let round = 0; round < ROUNDS; round++) {
    CONFIGS.forEach((c, i) => {
      for (let k = 0; k < QUANTIZE_CALLS_PER_ROUND; k++) quantizeSeconds[i]!.push(seconds(() => hqqQuantizer.quantize(input, c)));
      for (let k = 0; k < DEQUANTIZE_CALLS_PER_ROUND; k++) dequantizeSeconds[i]!.push(seconds(() => hqqQuantizer.dequantizeInto(quantized[i]!, out)));
    });
    await new Promise((resolve) => setTimeout(resolve, 0)); // let the event loop breathe between rounds
  }
  const references = referenceFigures();
  return CONFIGS.map((c, i) => {
    const reference = references.get(configName(c));
    const row: BenchRow = {
      name: `${configName(c)} (${engines[i]}${engines[i] === 'wasm' ? `, ${threads} thread${threads === 1 ? '' : 's'}` : ''})`,
      quantizeMBps: bytes / median(quantizeSeconds[i]!) / 1e6,
      dequantizeMBps: bytes / median(dequantizeSeconds[i]!) / 1e6,
    };
    if (reference !== undefined) {
      row.referenceQuantizeMBps = reference.quantize;
      if (reference.dequantize !== undefined) row.referenceDequantizeMBps = reference.dequantize;
    }
    return row;
  });
}

function formatTable(rows: readonly BenchRow[]): string {
  const mbps = (v: number | undefined): string => (v === undefined ? '–' : v.toFixed(v < 100 ? 1 : 0));
  const ratio = (v: number, r: number | undefined): string => (r === undefined ? '' : ` (${(v / r).toFixed(1)}×)`);
  return [
    '| config | quantize MB/s | reference | dequantize MB/s | reference |',
    '|---|---:|---:|---:|---:|',
    ...rows.map((r) =>
      `| ${r.name} | ${mbps(r.quantizeMBps)}${ratio(r.quantizeMBps, r.referenceQuantizeMBps)} | ${mbps(r.referenceQuantizeMBps)} | ` +
      `${mbps(r.dequantizeMBps)}${ratio(r.dequantizeMBps, r.referenceDequantizeMBps)} | ${mbps(r.referenceDequantizeMBps)} |`),
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const threads = process.argv.includes('--threads=1') ? 1 : 2;
  console.log(`HQQ port, input (${SHAPE.join(', ')}) float32, median of ${ROUNDS * QUANTIZE_CALLS_PER_ROUND} quantize and ` +
    `${ROUNDS * DEQUANTIZE_CALLS_PER_ROUND} dequantize calls per figure`);
  console.log(formatTable(await benchHqq({ threads })));
}
