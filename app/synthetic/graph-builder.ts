import type { OnnxAttribute, OnnxDim, OnnxGraph, OnnxNode, OnnxTensor, OnnxValueInfo } from './onnx-schema.js';
import { OnnxDataType } from './onnx-schema.js';

/** Element data of an initializer; its bytes go into `raw_data` as they lie in memory. */
export type TensorData = Float32Array | BigInt64Array;

/**
 * Builds an ONNX graph by name: inputs, initializers, nodes, outputs. Node names follow the torch
 * exporter's scheme (`/model/layers.0/self_attn/MatMul_1`, output `…/MatMul_1_output_0`) so the graph
 * reads like an Optimum export in Netron. Small constants are initializers, shared by value, which
 * ORT constant-folds at session creation.
 */
export class GraphBuilder {
  private readonly nodes: OnnxNode[] = [];
  private readonly initializers: OnnxTensor[] = [];
  private readonly inputs: OnnxValueInfo[] = [];
  private readonly outputs: OnnxValueInfo[] = [];
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
    const dataType = data instanceof Float32Array ? OnnxDataType.FLOAT : OnnxDataType.INT64;
    const count = dims.reduce((product, dim) => product * dim, 1);
    if (count !== data.length) {
      throw new RangeError(`initializer ${name}: dims [${dims.join(', ')}] hold ${count} values, but ${data.length} were given`);
    }
    // Typed arrays use the platform's byte order, little-endian on every platform ORT ships for,
    // which is what raw_data requires.
    const rawData = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    this.initializers.push({ name, dims: [...dims], dataType, rawData, ...(docString !== undefined ? { docString } : {}) });
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
  addNode(scope: string, opType: string, inputs: readonly string[], attributes: readonly OnnxAttribute[], outputs: readonly string[] | number): string[] {
    const name = this.uniqueName(`${scope}/${opType}`);
    const outputNames = typeof outputs === 'number'
      ? Array.from({ length: outputs }, (_, i) => `${name}_output_${i}`)
      : [...outputs];
    this.nodes.push({ name, opType, input: [...inputs], output: outputNames, attribute: [...attributes] });
    return outputNames;
  }

  build(name: string, docString: string): OnnxGraph {
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

  /** A single-output node whose output carries a given name, e.g. a graph output `present.0.key`. */
  opNamed(outputName: string, opType: string, inputs: readonly string[], attributes: readonly OnnxAttribute[] = []): string {
    return this.graph.addNode(this.scope, opType, inputs, attributes, [outputName])[0] as string;
  }
}

function valueInfo(name: string, elemType: OnnxDataType, dims: readonly OnnxDim[]): OnnxValueInfo {
  return {
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: dims.map((dim) => (typeof dim === 'number' ? { dimValue: dim } : { dimParam: dim })) },
      },
    },
  };
}
