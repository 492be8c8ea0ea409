import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../app/cache/cache-config.js';
import { runGeneration, resolveModelPath } from '../app/node/run-generation.js';
import { readModelFiles } from '../app/node/model/open-model.js';
import { createMinimalSession, minimalGreedy } from './minimal-loop.js';
import { promptText } from './generation-job.js';
const model = process.argv[2] === 'syn' ? 'synthetic' : '/work/shared/models/stories260k';
const n = Number(process.argv[3] ?? 256);
const reps = Number(process.argv[4] ?? 15);
const folder = await resolveModelPath(model);
const files = readModelFiles(folder);
const prompt = model === 'synthetic' ? promptText(16, files.tokenizer.encode) : 'Once upon a time';
const ids = files.tokenizer.encode(prompt);
const s = await createMinimalSession(files.onnxPath);
const settings = { model: folder, executionProvider: 'cpu', cacheMode: 'dynamic', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS, prompt, maxNewTokens: n, sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 }, reference: false } as const;
await runGeneration(settings); await minimalGreedy(s, ids, n);
const a: number[] = [], b: number[] = [], r: number[] = [];
for (let i = 0; i < reps; i++) {
  const k = (await runGeneration(settings)).timings.decodeTokensPerSecond;
  const m0 = await minimalGreedy(s, ids, n); const m = 1000 * m0.decodeTokens / m0.decodeMs;
  a.push(k); b.push(m); r.push(k / m);
}
const med = (x: number[]) => [...x].sort((p, q) => p - q)[x.length >> 1]!;
console.log(model, 'kvscope', med(a).toFixed(1), 'minimal', med(b).toFixed(1), 'paired ratio median', med(r).toFixed(3), 'max k', Math.max(...a).toFixed(0), 'max m', Math.max(...b).toFixed(0));
