import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../app/cache/cache-config.js';
import { runGeneration } from '../app/node/run-generation.js';
const settings = { model: '/work/shared/models/stories260k', executionProvider: 'cpu', cacheMode: 'dynamic', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS, prompt: 'Once upon a time', maxNewTokens: 256, sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 }, reference: false } as const;
let rest = 0, tot = 0, run = 0, cnt = 0;
for (let i = 0; i < 40; i++) {
  const r = await runGeneration(settings);
  if (i < 5) continue;
  for (const s of r.steps.slice(1)) { rest += s.timings.totalMs - s.timings.modelMs - s.timings.dequantizeMs - s.timings.quantizeMs; tot += s.timings.totalMs; run += s.timings.modelMs; cnt++; }
}
console.log('per step ms: total', (tot / cnt).toFixed(3), 'run', (run / cnt).toFixed(3), 'after-absorb rest', (rest / cnt).toFixed(3));
