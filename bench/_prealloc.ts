import * as ort from 'onnxruntime-node';
import { minimalGreedy } from './minimal-loop.js';
import { resolveModelPath } from '../app/node/run-generation.js';
import { readModelFiles } from '../app/node/model/open-model.js';
import { promptText } from './generation-job.js';
const folder = await resolveModelPath('synthetic');
const files = readModelFiles(folder);
const P = Number(process.env.P ?? 16), N = Number(process.env.N ?? 256);
const ids = files.tokenizer.encode(promptText(P, files.tokenizer.encode));
const session = await ort.InferenceSession.create(files.onnxPath);
const H = 4, D = 64;
async function prealloc(promptIds: number[], newTokens: number) {
  const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const cap = H * (promptIds.length + newTokens) * D;
  const bufs = new Map(pastNames.map((n) => [n, [new Float32Array(cap), new Float32Array(cap)]] as const));
  let cur = 0; let past = 0; let tok = promptIds.map(BigInt); const out: number[] = [];
  const t0 = performance.now(); let td = t0;
  for (let step = 0; step < newTokens; step++) {
    if (step === 1) td = performance.now();
    const total = past + tok.length;
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from(tok), [1, tok.length]),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(total).fill(1n), [1, total]),
      position_ids: new ort.Tensor('int64', BigInt64Array.from(tok, (_, i) => BigInt(past + i)), [1, tok.length]),
    };
    const fetches: Record<string, ort.Tensor | null> = { logits: null };
    for (const n of pastNames) {
      const [a, b] = bufs.get(n)!;
      const src = cur === 0 ? a : b, dst = cur === 0 ? b : a;
      feeds[n] = new ort.Tensor('float32', src.subarray(0, H * past * D), [1, H, past, D]);
      fetches[n.replace('past_key_values.', 'present.')] = new ort.Tensor('float32', dst.subarray(0, H * total * D), [1, H, total, D]);
    }
    const res = await session.run(feeds, fetches as ort.InferenceSession.FetchesType);
    const logits = res['logits']!.data as Float32Array; const V = 512;
    let best = 0; for (let i = 1; i < V; i++) if (logits[logits.length - V + i]! > logits[logits.length - V + best]!) best = i;
    out.push(best); cur ^= 1; past = total; tok = [BigInt(best)];
  }
  const end = performance.now();
  return { tokenIds: out, decodeMs: end - td, decodeTokens: newTokens - 1 };
}
const a = await minimalGreedy(session, ids, N); const b = await prealloc(ids, N);
console.log('same tokens', a.tokenIds.join() === b.tokenIds.join());
const ra: number[] = [], rb: number[] = [], ca: number[] = [], cb: number[] = [];
for (let i = 0; i < Number(process.env.R ?? 5); i++) {
  let c = process.cpuUsage(); const x = await minimalGreedy(session, ids, N); let cu = process.cpuUsage(c); ca.push((cu.user + cu.system) / 1e3 / x.decodeTokens);
  ra.push(1000 * x.decodeTokens / x.decodeMs);
  c = process.cpuUsage(); const y = await prealloc(ids, N); cu = process.cpuUsage(c); cb.push((cu.user + cu.system) / 1e3 / y.decodeTokens);
  rb.push(1000 * y.decodeTokens / y.decodeMs);
}
const med = (x: number[]) => [...x].sort((p, q) => p - q)[x.length >> 1]!;
console.log(`P=${P} N=${N} plain ${med(ra).toFixed(1)} tok/s cpu ${med(ca).toFixed(2)} ms/tok | prealloc ${med(rb).toFixed(1)} tok/s cpu ${med(cb).toFixed(2)} ms/tok`);
