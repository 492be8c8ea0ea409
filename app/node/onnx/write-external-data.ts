import { create } from '@bufbuild/protobuf';
import { StringStringEntryProtoSchema, TensorProto_DataLocation } from 'onnx-buf';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { cloneModel, encodeModel, type ModelProto } from '../../onnx/onnx-model.js';

export interface ExternalDataOptions {
  /** the data file of chunk `index`, relative to the graph (`model.onnx_data`, then `model.onnx_data_1`, …) */
  readonly location: (index: number) => string;
  /** a chunk is closed once it holds this many bytes (default: one chunk) */
  readonly chunkBytes?: number;
  /** initializers smaller than this stay inside the graph (default 1024, as onnx.save_model's size_threshold) */
  readonly minBytes?: number;
}

/**
 * Writes `model` to `onnxPath` with the main graph's larger initializers moved to external data
 * files, the way onnx's `save_model(save_as_external_data=True)` and transformers.js' converters do
 * (`location`, `offset`, `length` entries; data_location EXTERNAL). The model given is not changed.
 * Returns the data files written, relative to the graph.
 */
export async function writeModelWithExternalData(model: ModelProto, onnxPath: string, options: ExternalDataOptions): Promise<string[]> {
  const copy = cloneModel(model);
  const minBytes = options.minBytes ?? 1024;
  const chunkBytes = options.chunkBytes ?? Number.POSITIVE_INFINITY;
  const chunks: Uint8Array[][] = [];
  const sizes: number[] = [];
  for (const tensor of copy.graph?.initializer ?? []) {
    const bytes = tensor.rawData;
    if (bytes.length < minBytes) continue;
    let index = sizes.length - 1;
    if (index < 0 || sizes[index]! >= chunkBytes) {
      chunks.push([]);
      sizes.push(0);
      index++;
    }
    const entry = (key: string, value: string) => create(StringStringEntryProtoSchema, { key, value });
    tensor.externalData = [entry('location', options.location(index)), entry('offset', String(sizes[index])), entry('length', String(bytes.length))];
    tensor.dataLocation = TensorProto_DataLocation.EXTERNAL;
    tensor.rawData = new Uint8Array(0);
    chunks[index]!.push(bytes);
    sizes[index]! += bytes.length;
  }
  const written: string[] = [];
  for (const [index, parts] of chunks.entries()) {
    const location = options.location(index);
    await writeFile(join(dirname(onnxPath), location), Buffer.concat(parts));
    written.push(location);
  }
  await writeFile(onnxPath, encodeModel(copy));
  return written;
}
