import { create } from '@bufbuild/protobuf';
import { StringStringEntryProtoSchema, TensorProto_DataLocation } from 'onnx-buf';
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { basename, isAbsolute, normalize, sep } from 'node:path';
import { IN_PLACE_MIN_BYTES } from '../../model-layout/embedded-weights.js';
import type { ModelProto } from '../../onnx/onnx-model.js';
import { GraphRewriteError } from '../../onnx/rewrite/rewrite-error.js';

/*
 * A graph derived from a source graph (the in-graph rewrite, the eval reference's hidden-state graph
 * and LM head) cached without a byte of the source's weights (issue 23: the weights once, never
 * copied or linked, on one file system or across two): initializers stored inside the source `.onnx`
 * point back at their bytes there (external data with an offset), external data files are read where
 * they are (onnxruntime's `session.model_external_initializers_file_folder_path`, the source graph's
 * folder). The derived graph is kilobytes, so a cache entry verifies it whole by sha256 before use.
 */


export interface SourceRange {
  readonly offset: number;
  readonly bytes: Uint8Array;
}

/**
 * Where each large initializer's raw bytes sit inside the source file. protobuf-es decodes `bytes`
 * fields as views of the buffer it was given (BinaryReader.bytes: `buf.subarray`), so the offset is
 * the view's, read before the rewrite copies anything.
 */
export function embeddedInitializers(source: ModelProto, file: Uint8Array): Map<string, SourceRange> {
  const ranges = new Map<string, SourceRange>();
  for (const tensor of source.graph?.initializer ?? []) {
    const raw = tensor.rawData;
    if (raw.byteLength < IN_PLACE_MIN_BYTES || raw.buffer !== file.buffer) continue;
    ranges.set(tensor.name, { offset: raw.byteOffset - file.byteOffset, bytes: raw });
  }
  return ranges;
}

/** Turns every initializer the rewrite kept unchanged into external data inside the source graph file (location, offset, length). */
export function pointAtSource(model: ModelProto, ranges: ReadonlyMap<string, SourceRange>, sourceFile: string): void {
  const entry = (key: string, value: string) => create(StringStringEntryProtoSchema, { key, value });
  for (const tensor of model.graph?.initializer ?? []) {
    const range = ranges.get(tensor.name);
    // the rewrite copies initializers; only bytes still equal to the source's may be read from it
    if (range === undefined || !Buffer.from(tensor.rawData.buffer, tensor.rawData.byteOffset, tensor.rawData.byteLength).equals(range.bytes)) continue;
    tensor.externalData = [entry('location', sourceFile), entry('offset', String(range.offset)), entry('length', String(range.bytes.byteLength))];
    tensor.dataLocation = TensorProto_DataLocation.EXTERNAL;
    tensor.rawData = new Uint8Array(0);
  }
}

/** Points every external data `location` of the graph that `relocate` maps elsewhere at its new name (the source's data files where they really are). */
export function relocateExternalData(model: ModelProto, relocate: (location: string) => string): void {
  for (const tensor of model.graph?.initializer ?? []) {
    for (const entry of tensor.externalData) if (entry.key === 'location') entry.value = relocate(entry.value);
  }
}

/** The graph's external data files other than the source graph itself (whose bytes the key already hashes). */
export function externalLocations(model: ModelProto, sourceFile: string): string[] {
  const locations = new Set<string>();
  for (const tensor of model.graph?.initializer ?? []) {
    const location = tensor.externalData.find((item) => item.key === 'location')?.value;
    if (location === undefined || location === sourceFile) continue;
    const relative = normalize(location);
    if (isAbsolute(relative) || relative.split(sep).includes('..')) {
      throw new GraphRewriteError(`the graph's external data location ${JSON.stringify(location)} leaves its folder.`,
        'Use a model whose external data files sit beside (or below) the .onnx file, as exporters write them.');
    }
    locations.add(relative);
  }
  return [...locations].sort();
}

/** `path`'s fault as a cache entry holding a graph of `bytes` bytes and this sha256, or null when it is whole. */
export async function checkGraphFile(path: string, expectedBytes: number, expectedSha256: string): Promise<string | null> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch {
    return `has no ${basename(path)}`;
  }
  try {
    if ((await handle.stat()).size !== expectedBytes) return `has a ${basename(path)} of the wrong size (half-written or altered)`;
    const hash = createHash('sha256');
    for await (const chunk of handle.createReadStream({ highWaterMark: 1 << 22, autoClose: false })) hash.update(chunk as Buffer);
    return hash.digest('hex') === expectedSha256 ? null : `has a ${basename(path)} that does not match its sha256 (damaged)`;
  } finally {
    await handle.close();
  }
}
