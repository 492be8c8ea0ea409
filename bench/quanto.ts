import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { goldenPath, hasShared } from '../app/node/golden.js';
import { quantoQuantizer } from '../app/quant/quanto/quanto.js';
import { normalTensor } from '../app/quant/quanto/test-support/random.js';
import { kvTensor, type KvShape } from '../app/tensor/kv-tensor.js';
import type { BenchRow } from './types.js';
import { median } from './statistics.js';

/**
 * Throughput of the quanto port on the reference workload of ../shared/golden/throughput.json:
 * a (1, 8, 4096, 128) float32 tensor. MB/s = 16,777,216 input bytes / seconds / 1e6, for quantize and
 * for dequantize (`dequantizeInto` a preallocated output, as the cache uses it). Each figure is the
 * median over interleaved timed calls after warm-up calls, like the Python reference.
 *
 * Run: `npx tsx bench/quanto.ts`
 */

interface Config { nbits: 2 | 4; axis: 0 | -1; groupSize: number }

const SHAPE: KvShape = [1, 8, 4096, 128];
const CONFIGS: readonly Config[] = [
  { nbits: 4, axis: 0, groupSize: 64 },
  { nbits: 2, axis: 0, groupSize: 64 },
  { nbits: 4, axis: -1, groupSize: 64 },
  { nbits: 2, axis: -1, groupSize: 64 },
  { nbits: 4, axis: 0, groupSize: 128 },
];
const WARMUP_CALLS = 3;
const ROUNDS = 5;
const CALLS_PER_ROUND = 3;

interface ReferenceSummary {
  backend: string; nbits: number; axis: number; group_size: number;
  quantize_median_MB_per_s: number[]; dequantize_median_MB_per_s: number[];
}

/** The faster of the reference's two runs (A, B), so the figure to beat is never the easier one. */
function referenceFigures(): Map<string, { quantize: number; dequantize: number }> {
  const figures = new Map<string, { quantize: number; dequantize: number }>();
  if (!hasShared()) return figures;
  const json = JSON.parse(readFileSync(goldenPath('throughput.json'), 'utf8')) as { summary: ReferenceSummary[] };
  for (const row of json.summary) {
    if (row.backend !== 'quanto') continue;
    figures.set(configName(row.nbits, row.axis, row.group_size), {
      quantize: Math.max(...row.quantize_median_MB_per_s),
      dequantize: Math.max(...row.dequantize_median_MB_per_s),
    });
  }
  return figures;
}

function configName(nbits: number, axis: number, groupSize: number): string {
  return `quanto int${nbits} axis ${axis} g${groupSize}`;
}

export async function benchQuanto(): Promise<BenchRow[]> {
  const input = kvTensor(SHAPE, 'float32', normalTensor(SHAPE[0] * SHAPE[1] * SHAPE[2] * SHAPE[3], 20251201));
  const bytes = input.data.byteLength;
  const out = new Float32Array(input.data.length);
  const quantized = CONFIGS.map((c) => quantoQuantizer.quantize(input, c));
  const quantizeSeconds: number[][] = CONFIGS.map(() => []);
  const dequantizeSeconds: number[][] = CONFIGS.map(() => []);
  for (let w = 0; w < WARMUP_CALLS; w++) {
    CONFIGS.forEach((c, i) => {
      quantoQuantizer.quantize(input, c);
      quantoQuantizer.dequantizeInto(quantized[i]!, out);
    });
  }
  for (let round = 0; round < ROUNDS; round++) {
    CONFIGS.forEach((c, i) => {
      for (let k = 0; k < CALLS_PER_ROUND; k++) {
        let t0 = performance.now();
        quantoQuantizer.quantize(input, c);
        quantizeSeconds[i]!.push((performance.now() - t0) / 1e3);
        t0 = performance.now();
        quantoQuantizer.dequantizeInto(quantized[i]!, out);
        dequantizeSeconds[i]!.push((performance.now() - t0) / 1e3);
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 0)); // let the event loop breathe between rounds
  }
  const references = referenceFigures();
  return CONFIGS.map((c, i) => {
    const name = configName(c.nbits, c.axis, c.groupSize);
    const reference = references.get(name);
    const row: BenchRow = {
      name,
      quantizeMBps: bytes / median(quantizeSeconds[i]!) / 1e6,
      dequantizeMBps: bytes / median(dequantizeSeconds[i]!) / 1e6,
    };
    if (reference !== undefined) {
      row.referenceQuantizeMBps = reference.quantize;
      row.referenceDequantizeMBps = reference.dequantize;
    }
    return row;
  });
}

function formatTable(rows: readonly BenchRow[]): string {
  const mbps = (v: number | undefined): string => (v === undefined ? '–' : v.toFixed(0));
  const ratio = (v: number, r: number | undefined): string => (r === undefined ? '' : ` (${(v / r).toFixed(1)}×)`);
  const lines = [
    '| config | quantize MB/s | reference | dequantize MB/s | reference |',
    '|---|---:|---:|---:|---:|',
    ...rows.map((r) =>
      `| ${r.name} | ${mbps(r.quantizeMBps)}${ratio(r.quantizeMBps, r.referenceQuantizeMBps)} | ${mbps(r.referenceQuantizeMBps)} | ` +
      `${mbps(r.dequantizeMBps)}${ratio(r.dequantizeMBps, r.referenceDequantizeMBps)} | ${mbps(r.referenceDequantizeMBps)} |`),
  ];
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(`quanto port, input (${SHAPE.join(', ')}) float32, ${ROUNDS * CALLS_PER_ROUND} timed calls per figure (median)`);
  console.log(formatTable(await benchQuanto()));
}
