import * as ort from 'onnxruntime-node';
import { minimalGreedy } from './minimal-loop.js';
const path = '/work/shared/models/stories260k/onnx/model.onnx';
const ids = [1, 403, 407, 261, 378];
const sa = await ort.InferenceSession.create(path);
for (let i = 0; i < 40; i++) await minimalGreedy(sa, ids, 256);
