import { fromBinary } from '@bufbuild/protobuf';
import { OperatorSetIdProtoSchema, StringStringEntryProtoSchema, ValueInfoProtoSchema, type ValueInfoProto } from 'onnx-buf';
import type { ByteSource } from './byte-source.js';
import { elementBits, elementTypeName } from './element-types.js';
import { WindowedReader, WireType, type WireField } from './wire-reader.js';

/** A graph input or output as onnxruntime's metadata names it (type `float16`, symbolic dims as strings). */
export interface GraphValue {
  readonly name: string;
  /** onnxruntime's element type name; `non-tensor` for sequences, maps and optionals */
  readonly type: string;
  /** fixed sizes as numbers, symbolic ones by name; an unnamed dynamic dim is `?` */
  readonly shape: readonly (number | string)[];
}

/** Where an initializer's bytes are: inside the .onnx, or in an external data file beside it. */
export interface InitializerSummary {
  readonly name: string;
  readonly type: string;
  readonly dims: readonly number[];
  /** the bytes its values take, stored or referenced */
  readonly bytes: number;
  /** set when the values live in an external data file (`location` relative to the .onnx) */
  readonly external: { readonly location: string; readonly offset: number; readonly length: number | null } | null;
}

export interface GraphNodeSummary {
  readonly opType: string;
  /** '' for the default ONNX domain, `com.microsoft` for onnxruntime's contrib ops */
  readonly domain: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
}

/** What kvscope needs to know about a graph before loading it: read from the protobuf, weights skipped. */
export interface GraphHeader {
  readonly irVersion: number;
  readonly producerName: string;
  readonly producerVersion: string;
  readonly opsetImports: readonly { readonly domain: string; readonly version: number }[];
  readonly metadata: Readonly<Record<string, string>>;
  readonly graphName: string;
  /** the inputs a caller feeds (graph inputs that are also initializers, as IR < 4 lists them, are left out) */
  readonly inputs: readonly GraphValue[];
  readonly outputs: readonly GraphValue[];
  readonly initializers: readonly InitializerSummary[];
  /** the main graph's nodes, attributes left out (subgraphs of If/Loop are not walked) */
  readonly nodes: readonly GraphNodeSummary[];
}

// onnx.proto field numbers (facts of the format).
const MODEL = { irVersion: 1, producerName: 2, producerVersion: 3, graph: 7, opsetImport: 8, metadataProps: 14 } as const;
const GRAPH = { node: 1, name: 2, initializer: 5, input: 11, output: 12 } as const;
const NODE = { input: 1, output: 2, opType: 4, domain: 7 } as const;
const TENSOR = { dims: 1, dataType: 2, name: 8, rawData: 9, externalData: 13, dataLocation: 14 } as const;
/** TensorProto's typed value fields (float_data, int32_data, string_data, int64_data, double_data, uint64_data) */
const TENSOR_VALUES: ReadonlySet<number> = new Set([4, 5, 6, 7, 10, 11]);
const EXTERNAL = 1;

/**
 * Reads a model's header (IR and opsets, inputs and outputs with their types and shapes, the main
 * graph's nodes, and every initializer's type, size and location) by walking the protobuf and
 * skipping every weight's bytes: a graph with 2 GB of embedded weights costs a few reads of its small
 * fields, and one with external data never opens the data file. Throws OnnxFormatError on bytes that
 * are not an ONNX model.
 */
export async function readGraphHeader(source: ByteSource, fileName: string): Promise<GraphHeader> {
  const reader = new WindowedReader(source, fileName);
  let irVersion = 0;
  let producerName = '';
  let producerVersion = '';
  const opsetImports: { domain: string; version: number }[] = [];
  const metadata: Record<string, string> = {};
  let graph: GraphParts | null = null;
  for await (const field of reader.fields(0, source.size)) {
    if (field.number === MODEL.irVersion && field.wireType === WireType.varint) irVersion = Number(field.varint);
    else if (field.number === MODEL.producerName && isBytes(field)) producerName = await reader.text(field);
    else if (field.number === MODEL.producerVersion && isBytes(field)) producerVersion = await reader.text(field);
    else if (field.number === MODEL.opsetImport && isBytes(field)) {
      const opset = fromBinary(OperatorSetIdProtoSchema, await reader.payload(field));
      opsetImports.push({ domain: opset.domain, version: Number(opset.version) });
    } else if (field.number === MODEL.metadataProps && isBytes(field)) {
      const entry = fromBinary(StringStringEntryProtoSchema, await reader.payload(field));
      metadata[entry.key] = entry.value;
    } else if (field.number === MODEL.graph && isBytes(field)) {
      graph = await readGraph(reader, field);
    }
  }
  if (graph === null) {
    throw reader.corrupt(0, 'no graph (a ModelProto without field 7)');
  }
  const initializerNames = new Set(graph.initializers.map((initializer) => initializer.name));
  return {
    irVersion, producerName, producerVersion, opsetImports, metadata,
    graphName: graph.name,
    inputs: graph.inputs.filter((input) => !initializerNames.has(input.name)),
    outputs: graph.outputs,
    initializers: graph.initializers,
    nodes: graph.nodes,
  };
}

/**
 * The external data files a header references, by first use: the bytes each holds for the graph, and
 * `end`, the furthest byte an initializer reads (offset + length): the least size the file can have.
 */
export function externalDataFiles(header: GraphHeader): { readonly location: string; readonly bytes: number; readonly end: number }[] {
  const files = new Map<string, { bytes: number; end: number }>();
  for (const initializer of header.initializers) {
    const external = initializer.external;
    if (external === null) continue;
    const file = files.get(external.location) ?? { bytes: 0, end: 0 };
    file.bytes += initializer.bytes;
    file.end = Math.max(file.end, external.offset + initializer.bytes);
    files.set(external.location, file);
  }
  return [...files].map(([location, file]) => ({ location, ...file }));
}

interface GraphParts {
  name: string;
  inputs: GraphValue[];
  outputs: GraphValue[];
  initializers: InitializerSummary[];
  nodes: GraphNodeSummary[];
}

async function readGraph(reader: WindowedReader, graphField: WireField): Promise<GraphParts> {
  const parts: GraphParts = { name: '', inputs: [], outputs: [], initializers: [], nodes: [] };
  for await (const field of reader.fields(graphField.start, graphField.end)) {
    if (!isBytes(field)) continue;
    switch (field.number) {
      case GRAPH.name: parts.name = await reader.text(field); break;
      case GRAPH.input: parts.inputs.push(graphValue(fromBinary(ValueInfoProtoSchema, await reader.payload(field)))); break;
      case GRAPH.output: parts.outputs.push(graphValue(fromBinary(ValueInfoProtoSchema, await reader.payload(field)))); break;
      case GRAPH.node: parts.nodes.push(await readNode(reader, field)); break;
      case GRAPH.initializer: parts.initializers.push(await readInitializer(reader, field)); break;
      default: break;
    }
  }
  return parts;
}

async function readNode(reader: WindowedReader, nodeField: WireField): Promise<GraphNodeSummary> {
  let opType = '';
  let domain = '';
  const inputs: string[] = [];
  const outputs: string[] = [];
  for await (const field of reader.fields(nodeField.start, nodeField.end)) {
    if (!isBytes(field)) continue;
    if (field.number === NODE.opType) opType = await reader.text(field);
    else if (field.number === NODE.domain) domain = await reader.text(field);
    else if (field.number === NODE.input) inputs.push(await reader.text(field));
    else if (field.number === NODE.output) outputs.push(await reader.text(field));
  }
  return { opType, domain: domain === 'ai.onnx' ? '' : domain, inputs, outputs };
}

async function readInitializer(reader: WindowedReader, tensorField: WireField): Promise<InitializerSummary> {
  let name = '';
  let dataType = 0;
  const dims: number[] = [];
  let storedBytes = 0;
  let location: string | null = null;
  let offset = 0;
  let length: number | null = null;
  let dataLocation = 0;
  for await (const field of reader.fields(tensorField.start, tensorField.end)) {
    switch (field.number) {
      case TENSOR.dims:
        if (field.wireType === WireType.varint) dims.push(Number(BigInt.asIntN(64, field.varint)));
        else if (isBytes(field)) dims.push(...packedVarints(await reader.payload(field)));
        break;
      case TENSOR.dataType:
        if (field.wireType === WireType.varint) dataType = Number(field.varint);
        break;
      case TENSOR.name:
        if (isBytes(field)) name = await reader.text(field);
        break;
      case TENSOR.rawData:
        storedBytes += field.end - field.start;
        break;
      case TENSOR.externalData:
        if (isBytes(field)) {
          const entry = fromBinary(StringStringEntryProtoSchema, await reader.payload(field));
          if (entry.key === 'location') location = entry.value;
          else if (entry.key === 'offset') offset = Number(entry.value);
          else if (entry.key === 'length') length = Number(entry.value);
        }
        break;
      case TENSOR.dataLocation:
        if (field.wireType === WireType.varint) dataLocation = Number(field.varint);
        break;
      default:
        if (TENSOR_VALUES.has(field.number)) storedBytes += field.end - field.start;
        break;
    }
  }
  const external = dataLocation === EXTERNAL && location !== null ? { location, offset, length } : null;
  const bits = elementBits(dataType);
  const count = dims.reduce((product, dim) => product * dim, 1);
  const declaredBytes = bits === null ? null : Math.ceil((count * bits) / 8);
  const bytes = external !== null ? (length ?? declaredBytes ?? 0) : storedBytes;
  return { name, type: elementTypeName(dataType), dims, bytes, external };
}

function graphValue(info: ValueInfoProto): GraphValue {
  const type = info.type?.value;
  if (type?.case !== 'tensorType') return { name: info.name, type: 'non-tensor', shape: [] };
  const shape = (type.value.shape?.dim ?? []).map((dim) => {
    if (dim.value.case === 'dimValue') return Number(dim.value.value);
    if (dim.value.case === 'dimParam' && dim.value.value !== '') return dim.value.value;
    return '?';
  });
  return { name: info.name, type: elementTypeName(type.value.elemType), shape };
}

function isBytes(field: WireField): boolean {
  return field.wireType === WireType.lengthDelimited;
}

function packedVarints(bytes: Uint8Array): number[] {
  const values: number[] = [];
  let value = 0n;
  let shift = 0n;
  for (const byte of bytes) {
    value |= BigInt(byte & 0x7f) << shift;
    shift += 7n;
    if ((byte & 0x80) === 0) {
      values.push(Number(BigInt.asIntN(64, value)));
      value = 0n;
      shift = 0n;
    }
  }
  return values;
}
