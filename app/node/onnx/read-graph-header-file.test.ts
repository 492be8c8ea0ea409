import { statSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { externalDataFiles } from '../../onnx/graph-header.js';
import { sharedDir } from '../golden.js';
import { readGraphHeaderFile } from './read-graph-header-file.js';

const MODELS = join(sharedDir(), 'models');
/** Real exports made by others (stories260k by Optimum, the rest by onnxruntime-genai's builders). */
const GRAPHS = [
  'stories260k/onnx/model.onnx',
  'stories260k/onnx/model_fp16.onnx',
  'ort-genai-tiny/llama-fp16/model.onnx',
  'ort-genai-tiny/lfm2-hybrid-stub/decoder.onnx',
  'ort-genai-tiny/gpt2-combined-past/past.onnx',
];

type Io = { name: string; type: string; shape: (number | string)[] };

/** onnxruntime's own view of the graph's I/O: what the header must agree with. */
async function ortIo(path: string): Promise<{ inputs: Io[]; outputs: Io[] }> {
  const session = await ort.InferenceSession.create(path, { executionProviders: ['cpu'] });
  try {
    const io = (metadata: readonly ort.InferenceSession.ValueMetadata[]): Io[] =>
      metadata.map((info) => (info.isTensor ? { name: info.name, type: info.type, shape: info.shape.map((dim) => (typeof dim === 'number' && dim < 0 ? '?' : dim)) } : { name: info.name, type: 'non-tensor', shape: [] }));
    return { inputs: io(session.inputMetadata), outputs: io(session.outputMetadata) };
  } finally {
    await session.release();
  }
}

describe('readGraphHeaderFile on real exports', () => {
  for (const graph of GRAPHS) {
    it(`${graph}: the same inputs and outputs as onnxruntime reports`, async () => {
      const path = join(MODELS, graph);
      const header = await readGraphHeaderFile(path);
      const expected = await ortIo(path);
      expect(header.inputs).toEqual(expected.inputs);
      expect(header.outputs).toEqual(expected.outputs);
    });
  }

  it('counts the external data the model builder writes beside model.onnx, without opening it', async () => {
    const dir = join(MODELS, 'ort-genai-tiny', 'llama-fp16');
    const header = await readGraphHeaderFile(join(dir, 'model.onnx'));
    const files = externalDataFiles(header);
    expect(files.map((file) => file.location)).toEqual(['model.onnx.data']);
    const dataBytes = statSync(join(dir, 'model.onnx.data')).size;
    // the data file holds every external tensor, aligned: its size bounds the sum from above
    expect(files[0]!.bytes).toBeLessThanOrEqual(dataBytes);
    expect(files[0]!.bytes).toBeGreaterThan(0.9 * dataBytes);
    expect(header.nodes.some((node) => node.domain === 'com.microsoft' && node.opType === 'MultiHeadAttention')).toBe(true);
  });

  it('sizes the weights embedded in stories260k (most of its 1.3 MB; Constant nodes hold the rest)', async () => {
    const header = await readGraphHeaderFile(join(MODELS, 'stories260k', 'onnx', 'model.onnx'));
    expect(header.initializers.every((initializer) => initializer.external === null)).toBe(true);
    const weightBytes = header.initializers.reduce((sum, initializer) => sum + initializer.bytes, 0);
    expect(header.initializers).toHaveLength(48);
    expect(weightBytes).toBeGreaterThan(0.8 * statSync(join(MODELS, 'stories260k', 'onnx', 'model.onnx')).size);
  });
});
