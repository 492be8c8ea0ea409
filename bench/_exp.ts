import * as ort from 'onnxruntime-node';
import { minimalGreedy } from './minimal-loop.js';
import { resolveModelPath } from '../app/node/run-generation.js';
const folder = await resolveModelPath('synthetic');
const path = folder + '/onnx/model.onnx';
const mode = process.argv[2];
const s = await ort.InferenceSession.create(path, mode === 'nomp' ? { enableMemPattern: false } : {});
const prompt = Array.from({ length: 16 }, (_, i) => 3 + i * 7);
await minimalGreedy(s, prompt, 32);
const r = [];
for (let i = 0; i < 2; i++) { const x = await minimalGreedy(s, prompt, 384); r.push(Math.round(1000 * x.decodeTokens / x.decodeMs)); }
console.log(mode, r);
