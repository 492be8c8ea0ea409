import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../app/cache/cache-config.js';
import { generate } from '../app/engine/generate.js';
import { readModelFiles, openModelSession } from '../app/node/model/open-model.js';
import { encodePrompt } from '../app/node/model/load-tokenizer.js';
import { createMinimalSession, minimalGreedy } from './minimal-loop.js';
for (const k of (process.env.KVX ?? '').split(',')) (globalThis as any)[k] = true;
import { resolveModelPath } from '../app/node/run-generation.js';
import { promptText } from './generation-job.js';
const syn = process.env.SYN === '1';
const folder = syn ? await resolveModelPath('synthetic') : '/work/shared/models/stories260k';
const files = readModelFiles(folder);
const files0 = readModelFiles(folder);
const prompt = syn ? promptText(Number(process.env.P ?? 16), files0.tokenizer.encode) : 'Once upon a time';
const ids = encodePrompt(files.tokenizer, prompt, 1);
const model = await openModelSession(files, 'cpu');
const s = await createMinimalSession(files.onnxPath);
const n = Number(process.env.N ?? 256);
const settings = { model: folder, executionProvider: 'cpu', cacheMode: 'dynamic', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS, prompt, maxNewTokens: n, sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 }, reference: false } as const;
const mem = () => { const u = process.memoryUsage(); return { rssBytes: u.rss, externalBytes: u.external, arrayBuffersBytes: u.arrayBuffers }; };
const gen = async () => (await generate({ session: model.session, io: model.io, config: model.config, settings, promptTokenIds: ids, eosTokenIds: [1, 2], decodeText: model.tokenizer.decode, now: () => performance.now(), sampleMemory: process.argv[2] === 'nomem' ? undefined : mem })).timings.decodeMs; const genRate = async () => 1000 * (n - 1) / (await gen());
await gen(); await minimalGreedy(s, ids, n);
const a: number[] = [], b: number[] = [], r: number[] = [];
for (let i = 0; i < Number(process.env.R ?? 40); i++) {
  const k = await genRate();
  const m0 = await minimalGreedy(s, ids, n); const m = 1000 * m0.decodeTokens / m0.decodeMs;
  a.push(k); b.push(m); r.push(k / m);
}
const med = (x: number[]) => [...x].sort((p, q) => p - q)[x.length >> 1]!;
console.log(process.argv[2] ?? '', 'generate() kvscope', med(a).toFixed(1), 'minimal', med(b).toFixed(1), 'paired ratio median', med(r).toFixed(3));
