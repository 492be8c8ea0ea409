import { describe, expect, it } from 'vitest';
import { intAttribute } from './attributes.js';
import { bytesSource, type ByteSource } from './byte-source.js';
import { OnnxDataType } from './element-types.js';
import { GraphBuilder } from './graph-builder.js';
import { externalDataFiles, readGraphHeader } from './graph-header.js';
import { createModel, encodeModel } from './onnx-model.js';
import { OnnxFormatError } from './onnx-errors.js';

const WEIGHT_VALUES = 1 << 20; // a 4 MiB embedded weight

/** A decoder-shaped graph: int32 ids, an fp16 past, a 4 MiB embedded weight and one external one. */
function sampleModelBytes(): Uint8Array {
  const g = new GraphBuilder();
  const ids = g.input('input_ids', OnnxDataType.INT32, ['batch_size', 'sequence_length']);
  const past = g.input('past_key_values.0.key', OnnxDataType.FLOAT16, ['batch_size', 2, 'past_sequence_length', 8]);
  g.input('unnamed', OnnxDataType.FLOAT, [1, '']);
  g.output('logits', OnnxDataType.FLOAT, ['batch_size', 'sequence_length', 16]);
  g.output('present.0.key', OnnxDataType.FLOAT16, ['batch_size', 2, 'total_sequence_length', 8]);
  const weight = g.initializer('embed.weight', [WEIGHT_VALUES], new Float32Array(WEIGHT_VALUES).fill(0.5));
  const scope = g.at('/model');
  const gathered = scope.op('Gather', [weight, ids]);
  scope.opNamed('logits', 'Cast', [gathered], [intAttribute('to', OnnxDataType.FLOAT)]);
  scope.opNamed('present.0.key', 'Identity', [past]);
  const graph = g.build('main_graph', 'a test graph');
  return encodeModel(createModel({
    irVersion: 8n,
    producerName: 'kvscope-test',
    producerVersion: '1',
    opsetImport: [{ domain: '', version: 17n }, { domain: 'com.microsoft', version: 1n }],
    metadataProps: [{ key: 'purpose', value: 'header test' }],
    graph: {
      ...graph,
      node: [...graph.node, { opType: 'GroupQueryAttention', domain: 'com.microsoft', input: ['a'], output: ['b'] }],
      initializer: [...graph.initializer, {
        name: 'lm_head.weight', dims: [16n, 4n], dataType: OnnxDataType.FLOAT16, dataLocation: 1,
        externalData: [{ key: 'location', value: 'model.onnx.data' }, { key: 'offset', value: '4096' }, { key: 'length', value: '128' }],
      }],
      // IR < 4 lists initializers among the inputs too: they are not inputs a caller feeds
      input: [...graph.input, { name: 'embed.weight', type: { value: { case: 'tensorType', value: { elemType: OnnxDataType.FLOAT, shape: { dim: [{ value: { case: 'dimValue', value: BigInt(WEIGHT_VALUES) } }] } } } } }],
    },
  }));
}

/** Counts what a reader asks for, to prove the weights are skipped. */
function countingSource(bytes: Uint8Array): ByteSource & { readBytes: number } {
  const inner = bytesSource(bytes);
  const source = {
    size: inner.size,
    readBytes: 0,
    read: async (offset: number, length: number) => {
      const chunk = await inner.read(offset, length);
      source.readBytes += chunk.length;
      return chunk;
    },
  };
  return source;
}

describe('readGraphHeader', () => {
  it('reads inputs, outputs, nodes, opsets and initializers as onnxruntime names them', async () => {
    const header = await readGraphHeader(bytesSource(sampleModelBytes()), 'model.onnx');
    expect(header.irVersion).toBe(8);
    expect(header.producerName).toBe('kvscope-test');
    expect(header.opsetImports).toEqual([{ domain: '', version: 17 }, { domain: 'com.microsoft', version: 1 }]);
    expect(header.metadata).toEqual({ purpose: 'header test' });
    expect(header.graphName).toBe('main_graph');
    expect(header.inputs).toEqual([
      { name: 'input_ids', type: 'int32', shape: ['batch_size', 'sequence_length'] },
      { name: 'past_key_values.0.key', type: 'float16', shape: ['batch_size', 2, 'past_sequence_length', 8] },
      { name: 'unnamed', type: 'float32', shape: [1, '?'] },
    ]);
    expect(header.outputs.map((output) => [output.name, output.type])).toEqual([['logits', 'float32'], ['present.0.key', 'float16']]);
    expect(header.nodes.map((node) => `${node.domain}:${node.opType}`)).toEqual([':Gather', ':Cast', ':Identity', 'com.microsoft:GroupQueryAttention']);
    expect(header.nodes[0]!.inputs).toEqual(['embed.weight', 'input_ids']);
    expect(header.initializers).toEqual([
      { name: 'embed.weight', type: 'float32', dims: [WEIGHT_VALUES], bytes: 4 * WEIGHT_VALUES, external: null },
      { name: 'lm_head.weight', type: 'float16', dims: [16, 4], bytes: 128, external: { location: 'model.onnx.data', offset: 4096, length: 128 } },
    ]);
    // end: offset 4096 + 128 bytes, the least size model.onnx.data can have
    expect(externalDataFiles(header)).toEqual([{ location: 'model.onnx.data', bytes: 128, end: 4224 }]);
  });

  it('never reads the weights: a 4 MiB embedded initializer costs a few KiB of reads', async () => {
    const bytes = sampleModelBytes();
    expect(bytes.length).toBeGreaterThan(4 * WEIGHT_VALUES);
    const source = countingSource(bytes);
    const header = await readGraphHeader(source, 'model.onnx');
    expect(header.inputs).toHaveLength(3);
    // two 64 KiB windows: before and after the weight's raw_data
    expect(source.readBytes).toBeLessThan(160 << 10);
  });

  it('refuses a truncated file, saying where it ends', async () => {
    const bytes = sampleModelBytes();
    const read = readGraphHeader(bytesSource(bytes.subarray(0, bytes.length - 100)), 'model.onnx');
    await expect(read).rejects.toBeInstanceOf(OnnxFormatError);
    await expect(read).rejects.toThrow(/model\.onnx ends in the middle of a field/);
  });

  it('refuses bytes that are not a model: text, an empty file, a Git LFS pointer', async () => {
    const text = (value: string): Uint8Array => Uint8Array.from(value, (c) => c.charCodeAt(0));
    for (const bytes of [text('{"model_type": "llama"}'), new Uint8Array(0), text('version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n')]) {
      await expect(readGraphHeader(bytesSource(bytes), 'model.onnx')).rejects.toBeInstanceOf(OnnxFormatError);
    }
  });
});
