import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../app/cache/cache-config.js';
import type { RunSettings } from '../app/engine/types.js';
import { createWorkbenchBackend, type WorkbenchBackend } from '../app/node/workbench/workbench-backend.js';
import { median } from './statistics.js';

/**
 * Start latency: from Run to the first streamed step (what turns the workbench's "Starting…" into
 * "Generating…"), on stories260k, with a worker started for the run (cold) and on the warm worker
 * that opening the model loaded (warm), alternating, median of the repeats. Target: warm < 1 s.
 */
const STORIES = resolve(import.meta.dirname, '..', '..', 'shared', 'models', 'stories260k');
const REPEATS = 5;

function settings(): RunSettings {
  return {
    model: STORIES, executionProvider: 'cpu', cacheMode: 'quantized', quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32 },
    prompt: 'Once upon a time', maxNewTokens: 32, sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 }, reference: true,
  };
}

function firstStepMs(backend: WorkbenchBackend): Promise<number> {
  return new Promise((done, fail) => {
    const start = performance.now();
    let first = -1;
    void backend.startRun(settings(), {
      onText: () => undefined,
      onMetrics: () => {
        if (first < 0) first = performance.now() - start;
      },
      onDone: () => done(first),
      onError: (error) => fail(new Error(`${error.code}: ${error.message}`)),
    });
  });
}

export async function benchStartLatency(): Promise<{ lines: string[]; misses: string[] }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kvscope-bench-start-'));
  const cold = createWorkbenchBackend({ dataDir: join(dataDir, 'cold'), warmWorker: false });
  const warm = createWorkbenchBackend({ dataDir: join(dataDir, 'warm') });
  try {
    const opened = performance.now();
    await warm.openModel({ kind: 'folder', path: STORIES });
    const openMs = performance.now() - opened;
    await new Promise((r) => setTimeout(r, 1500)); // the warm-up runs in the background after openModel
    const coldMs: number[] = [];
    const warmMs: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      coldMs.push(await firstStepMs(cold));
      warmMs.push(await firstStepMs(warm));
    }
    const warmMedian = median(warmMs);
    const coldMedian = median(coldMs);
    const lines = [
      '| start latency (stories260k, Run → first step) | median ms | runs |',
      '|---|---:|---|',
      `| worker started for the run (cold) | ${coldMedian.toFixed(0)} | ${coldMs.map((v) => v.toFixed(0)).join(', ')} |`,
      `| warm worker (model opened first, ${openMs.toFixed(0)} ms to open) | ${warmMedian.toFixed(0)} | ${warmMs.map((v) => v.toFixed(0)).join(', ')} |`,
      `| ratio cold / warm | ${(coldMedian / warmMedian).toFixed(1)}× | target: warm < 1000 ms: ${warmMedian < 1000 ? 'ok' : 'MISS'} |`,
    ];
    return { lines, misses: warmMedian < 1000 ? [] : [`start latency: warm ${warmMedian.toFixed(0)} ms ≥ 1000 ms`] };
  } finally {
    await cold.dispose();
    await warm.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await benchStartLatency();
  console.log(result.lines.join('\n'));
  if (result.misses.length > 0) console.log(`targets missed:\n  ${result.misses.join('\n  ')}`);
}
