import * as ort from 'onnxruntime-node';
import { minimalGreedy } from './minimal-loop.js';
const path = '/work/shared/models/stories260k/onnx/model.onnx';
const ids = [1, 403, 407, 261, 378];
const sa = await ort.InferenceSession.create(path);
const sb = await ort.InferenceSession.create(path, { enableMemPattern: false });
const n = 256;
await minimalGreedy(sa, ids, n); await minimalGreedy(sb, ids, n);
const r: number[] = [], a: number[] = [], b: number[] = [];
for (let i = 0; i < 40; i++) {
  const x = await minimalGreedy(sa, ids, n); const y = await minimalGreedy(sb, ids, n);
  const ta = 1000 * x.decodeTokens / x.decodeMs, tb = 1000 * y.decodeTokens / y.decodeMs;
  a.push(ta); b.push(tb); r.push(tb / ta);
}
const med = (x: number[]) => [...x].sort((p, q) => p - q)[x.length >> 1]!;
console.log('default', med(a).toFixed(0), 'nomempattern', med(b).toFixed(0), 'paired nomp/default', med(r).toFixed(3));
