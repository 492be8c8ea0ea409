import type { MessageInitShape } from '@bufbuild/protobuf';
import { TensorProto_DataLocation, TensorProto_DataType as OnnxDataType, type NodeProtoSchema, type TensorProtoSchema, type ValueInfoProtoSchema } from 'onnx-buf';
import type { OnnxAttribute } from './attributes.js';

/** A dimension is a fixed size or a symbolic name (`batch_size`, `past_sequence_length + 1`). */
export type OnnxDim = number | string;

type NodeInit = MessageInitShape<typeof NodeProtoSchema>;
type TensorInit = MessageInitShape<typeof TensorProtoSchema>;
type ValueInfoInit = MessageInitShape<typeof ValueInfoProtoSchema>;
/** A graph as the builder returns it: plain init objects, ready for `createModel({ graph })`. */
export interface OnnxGraphInit {
  name: string;
  docString: string;
  node: NodeInit[];
  initializer: TensorInit[];
  input: ValueInfoInit[];
  output: ValueInfoInit[];
}

/** Element data of an initializer; its bytes go into `raw_data` as they lie in memory. */
export type TensorData = Float32Array | BigInt64Array | Int32Array | Uint8Array
  /** float16 bits, as kvscope holds fp16 everywhere */
  | Uint16Array;

/** Where a float32 initializer's bytes lie in an external data file (relative to the graph's folder). */
export interface ExternalTensorData {
  readonly location: string;
  readonly offset: number;
  /** bytes */
  readonly length: number;
}

/**
 * Builds an ONNX graph by name: inputs, initializers, nodes, outputs. Node names follow the torch
 * exporter's scheme (`/model/layers.0/self_attn/MatMul_1`, output `…/MatMul_1_output_0`) so the graph
 * reads like an Optimum export in Netron. Small constants are initializers, shared by value, which
 * ORT constant-folds at session creation.
 */
export class GraphBuilder {
  private readonly nodes: NodeInit[] = [];
  private readonly initializers: TensorInit[] = [];
  private readonly inputs: ValueInfoInit[] = [];
  private readonly outputs: ValueInfoInit[] = [];
  private readonly constants = new Map<string, string>();
  private readonly nodeNames = new Set<string>();

  input(name: string, elemType: OnnxDataType, dims: readonly OnnxDim[]): string {
    this.inputs.push(valueInfo(name, elemType, dims));
    return name;
  }

  /** Declares a graph output; a node must produce a value of this name (see `GraphScope.opNamed`). */
  output(name: string, elemType: OnnxDataType, dims: readonly OnnxDim[]): void {
    this.outputs.push(valueInfo(name, elemType, dims));
  }

  initializer(name: string, dims: readonly number[], data: TensorData, docString?: string): string {
    const dataType = tensorDataType(data);
    const count = dims.reduce((product, dim) => product * dim, 1);
    if (count !== data.length) {
      throw new RangeError(`initializer ${name}: dims [${dims.join(', ')}] hold ${count} values, but ${data.length} were given`);
    }
    // Typed arrays use the platform's byte order, little-endian on every platform ORT ships for,
    // which is what raw_data requires.
    const rawData = data.buffer instanceof ArrayBuffer
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    this.initializers.push({ name, dims: dims.map((dim) => BigInt(dim)), dataType, rawData, ...(docString !== undefined ? { docString } : {}) });
    return name;
  }

  /**
   * A float32 initializer whose bytes lie in an external data file beside the graph (`location`,
   * `offset`, `length`, data_location EXTERNAL: onnx's external data format), written by the caller.
   */
  externalInitializer(name: string, dims: readonly number[], data: ExternalTensorData, docString?: string): string {
    const count = dims.reduce((product, dim) => product * dim, 1);
    if (count * 4 !== data.length) {
      throw new RangeError(`initializer ${name}: dims [${dims.join(', ')}] hold ${count * 4} bytes of float32, but the external data holds ${data.length}`);
    }
    const entry = (key: string, value: string) => ({ key, value });
    this.initializers.push({
      name, dims: dims.map((dim) => BigInt(dim)), dataType: OnnxDataType.FLOAT, dataLocation: TensorProto_DataLocation.EXTERNAL,
      externalData: [entry('location', data.location), entry('offset', String(data.offset)), entry('length', String(data.length))],
      ...(docString !== undefined ? { docString } : {}),
    });
    return name;
  }

  /** An int64 constant (a shape, axes, repeats), shared by value. `dims` [] makes a scalar. */
  int64(values: readonly number[], dims: readonly number[] = [values.length]): string {
    const key = `/const/int64[${dims.join(',')}]{${values.join(',')}}`;
    return this.shared(key, () => this.initializer(key, dims, BigInt64Array.from(values, (value) => BigInt(value))));
  }

  /** A float32 scalar constant, shared by value. */
  float(value: number): string {
    const key = `/const/float{${value}}`;
    return this.shared(key, () => this.initializer(key, [], Float32Array.of(value)));
  }

  at(scope: string): GraphScope {
    return new GraphScope(this, scope);
  }

  /** @internal GraphScope's way in: one node, uniquely named within the graph. */
  addNode(
    scope: string, opType: string, inputs: readonly string[], attributes: readonly OnnxAttribute[], outputs: readonly string[] | number, domain = '',
  ): string[] {
    const name = this.uniqueName(`${scope}/${opType}`);
    const outputNames = typeof outputs === 'number'
      ? Array.from({ length: outputs }, (_, i) => `${name}_output_${i}`)
      : [...outputs];
    this.nodes.push({ name, opType, input: [...inputs], output: outputNames, attribute: [...attributes], ...(domain === '' ? {} : { domain }) });
    return outputNames;
  }

  build(name: string, docString: string): OnnxGraphInit {
    return {
      name,
      docString,
      node: this.nodes,
      initializer: this.initializers,
      input: this.inputs,
      output: this.outputs,
    };
  }

  private shared(key: string, create: () => string): string {
    const existing = this.constants.get(key);
    if (existing !== undefined) return existing;
    const name = create();
    this.constants.set(key, name);
    return name;
  }

  private uniqueName(base: string): string {
    let name = base;
    for (let i = 1; this.nodeNames.has(name); i++) name = `${base}_${i}`;
    this.nodeNames.add(name);
    return name;
  }
}

/** Adds nodes under one name prefix (`/model/layers.3/mlp`). */
export class GraphScope {
  constructor(readonly graph: GraphBuilder, readonly scope: string) {}

  at(child: string): GraphScope {
    return new GraphScope(this.graph, `${this.scope}/${child}`);
  }

  /** A single-output node; returns its output's name. */
  op(opType: string, inputs: readonly string[], attributes: readonly OnnxAttribute[] = []): string {
    return this.graph.addNode(this.scope, opType, inputs, attributes, 1)[0] as string;
  }

  /** A node with several outputs (Split). */
  ops(opType: string, inputs: readonly string[], outputCount: number, attributes: readonly OnnxAttribute[] = []): string[] {
    return this.graph.addNode(this.scope, opType, inputs, attributes, outputCount);
  }

  /**
   * A node of another operator domain (onnxruntime's contrib ops, `com.microsoft`: GroupQueryAttention,
   * MultiHeadAttention); the model must import that domain's opset.
   */
  domainOps(domain: string, opType: string, inputs: readonly string[], outputCount: number, attributes: readonly OnnxAttribute[] = []): string[] {
    return this.graph.addNode(this.scope, opType, inputs, attributes, outputCount, domain);
  }

  /** A single-output node whose output carries a given name, e.g. a graph output `present.0.key`. */
  opNamed(outputName: string, opType: string, inputs: readonly string[], attributes: readonly OnnxAttribute[] = []): string {
    return this.graph.addNode(this.scope, opType, inputs, attributes, [outputName])[0] as string;
  }
}

function valueInfo(name: string, elemType: OnnxDataType, dims: readonly OnnxDim[]): ValueInfoInit {
  const dim = dims.map((size) => ({
    value: typeof size === 'number' ? { case: 'dimValue' as const, value: BigInt(size) } : { case: 'dimParam' as const, value: size },
  }));
  return { name, type: { value: { case: 'tensorType', value: { elemType, shape: { dim } } } } };
}

function tensorDataType(data: TensorData): OnnxDataType {
  if (data instanceof Float32Array) return OnnxDataType.FLOAT;
  if (data instanceof BigInt64Array) return OnnxDataType.INT64;
  if (data instanceof Int32Array) return OnnxDataType.INT32;
  if (data instanceof Uint16Array) return OnnxDataType.FLOAT16;
  return OnnxDataType.UINT8;
}
