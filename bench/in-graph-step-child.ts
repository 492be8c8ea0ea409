import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../app/cache/cache-config.js';
import { readDecoderIo } from '../app/engine/decoder-io.js';
import { planInGraph } from '../app/engine/in-graph-run.js';
import { planCacheLayers } from '../app/cache/layer-plan.js';
import type { HostTensor } from '../app/engine/host-tensor.js';
import { IN_GRAPH_DISABLED_OPTIMIZERS } from '../app/node/model/open-in-graph-model.js';
import { readModelFiles } from '../app/node/model/open-model.js';
import { ensureInGraphModel } from '../app/node/onnx/in-graph-model.js';
import { readGraphHeaderFile } from '../app/node/onnx/read-graph-header-file.js';
import { createOrtDecoderSession } from '../app/node/ort/ort-decoder-session.js';
import { resolveModelPath } from '../app/node/run-generation.js';
import { groupLayout } from '../app/quant/quanto/grouping.js';
import { packedRowCount } from '../app/quant/quanto/packing.js';
import type { MemoryJob, StepSample } from './in-graph-memory-job.js';
import { zeroInputOf } from '../app/onnx/rewrite/in-graph-spec.js';
import { peakRssBytes, resetPeakRss } from './peak-rss.js';

/**
 * A `step` job of bench/in-graph-memory.ts (see MemoryJob): one decode run at a long context, its peak
 * inside ORT measured as ru_maxrss after that one run above the RSS before it (the peak reset just
 * before: peak-rss.ts; where it cannot be, the growth of ru_maxrss). Prints one StepSample as JSON.
 * By hand: `npx tsx bench/in-graph-step-child.ts '{"kind":"step","variant":"graph","model":"synthetic-8b-kv","tokens":2048}'`
 */
const job = JSON.parse(process.argv[2] ?? '') as Extract<MemoryJob, { kind: 'step' }>;
const files = await readModelFiles(await resolveModelPath(job.model));
const header = await readGraphHeaderFile(files.onnxPath);
const io = readDecoderIo(header.inputs, header.outputs, 'model.onnx').io!;
const { numLayers: layers, numKeyValueHeads: heads, headDim } = files.config.geometry;
const settings = DEFAULT_QUANTIZED_CACHE_SETTINGS;
const planned = planInGraph(io, files.config.geometry, planCacheLayers(files.config.layers.layers, 'all'), settings, 'bitwise');
if (!planned.ok) throw new Error(planned.reason);
const graph = job.variant === 'host' ? null : await ensureInGraphModel(files.onnxPath, { ...planned.spec, ...(job.variant === 'ungated' ? { gate: false } : {}) });
const session = await createOrtDecoderSession(graph?.path ?? files.onnxPath, {
  executionProvider: 'cpu', intraOpNumThreads: 1, ...(graph === null ? {} : { disabledOptimizers: IN_GRAPH_DISABLED_OPTIMIZERS, externalDataFolder: graph.externalDataFolder }),
});

const tokenFeeds = (past: number): Record<string, HostTensor> => ({
  input_ids: { type: 'int64', dims: [1, 1], data: BigInt64Array.of(5n) },
  attention_mask: { type: 'int64', dims: [1, past + 1], data: new BigInt64Array(past + 1).fill(1n) },
  position_ids: { type: 'int64', dims: [1, 1], data: BigInt64Array.of(BigInt(past)) },
});
/**
 * Every layer's past at `tokens` of context, as the variant feeds it, allocated before any measurement
 * and with nothing freed on the way (a freed temporary would raise ru_maxrss before the run and hide
 * the run's own peak): random codes in a quanto int4 store's exact layout, or random float32 history.
 */
function kvFeeds(tokens: number): Record<string, HostTensor> {
  const feeds: Record<string, HostTensor> = {};
  const layout = groupLayout([1, heads, tokens, headDim], 0, settings.groupSize);
  const byteRows = packedRowCount(layout.rows, settings.nbits);
  let seed = 1;
  const random = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  for (const layer of io.kvLayers) {
    for (const part of ['key', 'value'] as const) {
      if (graph === null) {
        const history = new Float32Array(heads * tokens * headDim);
        for (let i = 0; i < history.length; i++) history[i] = random() * 4 - 2;
        feeds[part === 'key' ? layer.pastKey : layer.pastValue] = { type: 'float32', dims: [1, heads, tokens, headDim], data: history };
        continue;
      }
      const names = graph.io.layers[layer.layer]![part];
      const codes = new Uint8Array(byteRows * layout.cols);
      for (let i = 0; i < codes.length; i++) codes[i] = (random() * 256) | 0;
      feeds[names.codes] = { type: 'uint8', dims: [byteRows, layout.cols], data: codes };
      feeds[names.scale] = { type: 'float32', dims: [...layout.paramShape], data: new Float32Array(layout.rows).fill(0.25) };
      feeds[zeroInputOf(names)] = { type: 'float32', dims: [...layout.paramShape], data: new Float32Array(layout.rows).fill(2) };
      feeds[names.residual] = { type: 'float32', dims: [1, heads, 0, headDim], data: new Float32Array(0) };
    }
  }
  return feeds;
}

// Warm-up at a short context: the session's weights, arena and kernels are in place before measuring.
const warm = 64;
const warmOutputs = await session.run({ ...tokenFeeds(warm), ...kvFeeds(warm) });
session.release?.(Object.values(warmOutputs));
const feeds = { ...tokenFeeds(job.tokens), ...kvFeeds(job.tokens) };
// The peak is reset to the RSS of this moment, so the run's own peak shows however high loading went.
const reset = resetPeakRss();
const before = reset ? process.memoryUsage.rss() : peakRssBytes();
const outputs = await session.run(feeds);
const after = peakRssBytes();
session.release?.(Object.values(outputs));
await session.dispose();
const layerHistoryBytes = 2 * heads * job.tokens * headDim * 4;
const sample: StepSample = { peakDeltaBytes: after - before, peakReset: reset, layerHistoryBytes, allLayersHistoryBytes: layers * layerHistoryBytes };
process.stdout.write(`${JSON.stringify(sample)}\n`);
