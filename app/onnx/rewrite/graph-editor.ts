import { create } from '@bufbuild/protobuf';
import {
  NodeProtoSchema, TensorProto_DataType as DataType, TensorProtoSchema, ValueInfoProtoSchema,
  type GraphProto, type NodeProto, type ValueInfoProto,
} from 'onnx-buf';
import type { OnnxAttribute } from '../attributes.js';
import type { OnnxDim, TensorData } from '../graph-builder.js';

/**
 * Edits one GraphProto that the caller owns (a clone: rewrites never touch the model they were given,
 * STYLE.md §16). New names are derived from the names already in the graph and never collide with
 * any of them (node names and value names are checked apart, as ONNX scopes them). Nodes may be added
 * in any order: `finish()` sorts the graph topologically, keeping the source order wherever the data
 * dependencies allow it, and drops the nodes left with no consumer, as ONNX requires and as a reader
 * of the rewritten graph in Netron would expect.
 */
export class GraphEditor {
  readonly graph: GraphProto;
  readonly #valueNames = new Set<string>();
  readonly #nodeNames = new Set<string>();
  readonly #constants = new Map<string, string>();

  constructor(graph: GraphProto) {
    this.graph = graph;
    for (const info of [...graph.input, ...graph.output, ...graph.valueInfo]) this.#valueNames.add(info.name);
    for (const tensor of graph.initializer) this.#valueNames.add(tensor.name);
    for (const node of graph.node) {
      if (node.name !== '') this.#nodeNames.add(node.name);
      for (const name of [...node.input, ...node.output]) if (name !== '') this.#valueNames.add(name);
    }
  }

  /** A value name not yet used in the graph: `base`, else `base_1`, `base_2`, … */
  freshValueName(base: string): string {
    let name = base;
    for (let i = 1; this.#valueNames.has(name); i++) name = `${base}_${i}`;
    this.#valueNames.add(name);
    return name;
  }

  /** Adds one node under `scope` and returns the names of its outputs (derived from the node's name). */
  node(scope: string, opType: string, inputs: readonly string[], attributes: readonly OnnxAttribute[] = [], outputCount = 1): string[] {
    let name = `${scope}/${opType}`;
    for (let i = 1; this.#nodeNames.has(name); i++) name = `${scope}/${opType}_${i}`;
    this.#nodeNames.add(name);
    const outputs = Array.from({ length: outputCount }, (_, i) => this.freshValueName(`${name}_output_${i}`));
    this.graph.node.push(create(NodeProtoSchema, { name, opType, input: [...inputs], output: outputs, attribute: [...attributes] }));
    return outputs;
  }

  /** A single-output node. */
  op(scope: string, opType: string, inputs: readonly string[], attributes: readonly OnnxAttribute[] = []): string {
    return this.node(scope, opType, inputs, attributes)[0]!;
  }

  /** A single-output node whose output has a given name (that name must be free, or be the name a removed input had). */
  opNamed(scope: string, outputName: string, opType: string, inputs: readonly string[], attributes: readonly OnnxAttribute[] = []): string {
    let name = `${scope}/${opType}`;
    for (let i = 1; this.#nodeNames.has(name); i++) name = `${scope}/${opType}_${i}`;
    this.#nodeNames.add(name);
    this.#valueNames.add(outputName);
    this.graph.node.push(create(NodeProtoSchema, { name, opType, input: [...inputs], output: [outputName], attribute: [...attributes] }));
    return outputName;
  }

  /** An int64 initializer (shapes, axes, slice bounds), shared by value; `dims` [] makes a scalar. */
  int64(values: readonly number[] | readonly bigint[], dims: readonly number[] = [values.length]): string {
    return this.#constant(`${dims.join(',')}|${values.join(',')}`, `int64{${values.join(',')}}`, dims,
      () => BigInt64Array.from(values as readonly (number | bigint)[], (value) => BigInt(value)));
  }

  /** A float32 scalar initializer. */
  float(value: number): string {
    return this.#constant(`float|${value}`, `float{${value}}`, [], () => Float32Array.of(value));
  }

  /** A uint8 scalar initializer (BitShift amounts). */
  uint8(value: number): string {
    return this.#constant(`uint8|${value}`, `uint8{${value}}`, [], () => Uint8Array.of(value));
  }

  /** The initializer made for `key`, or a new one named `/kvscope/const/<label>`: one per value. */
  #constant(key: string, label: string, dims: readonly number[], data: () => TensorData): string {
    const existing = this.#constants.get(key);
    if (existing !== undefined) return existing;
    const name = this.freshValueName(`/kvscope/const/${label}`);
    this.initializer(name, dims, data());
    this.#constants.set(key, name);
    return name;
  }

  initializer(name: string, dims: readonly number[], data: TensorData): void {
    const dataType = data instanceof Float32Array ? DataType.FLOAT
      : data instanceof BigInt64Array ? DataType.INT64
        : data instanceof Int32Array ? DataType.INT32
          : data instanceof Uint16Array ? DataType.FLOAT16 : DataType.UINT8;
    const rawData = new Uint8Array(data.byteLength);
    rawData.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    this.graph.initializer.push(create(TensorProtoSchema, { name, dims: dims.map((d) => BigInt(d)), dataType, rawData }));
    this.#valueNames.add(name);
  }

  /** Adds a graph input after the existing ones. */
  addInput(name: string, elemType: DataType, dims: readonly OnnxDim[]): string {
    this.#valueNames.add(name);
    this.graph.input.push(valueInfo(name, elemType, dims));
    return name;
  }

  addOutput(name: string, elemType: DataType, dims: readonly OnnxDim[]): void {
    this.graph.output.push(valueInfo(name, elemType, dims));
  }

  /** Removes a graph input; its name stays taken, so a node may now produce a value of that name. */
  removeInput(name: string): ValueInfoProto {
    const index = this.graph.input.findIndex((info) => info.name === name);
    if (index < 0) throw new RangeError(`the graph has no input ${name}`);
    return this.graph.input.splice(index, 1)[0]!;
  }

  removeOutput(name: string): ValueInfoProto {
    const index = this.graph.output.findIndex((info) => info.name === name);
    if (index < 0) throw new RangeError(`the graph has no output ${name}`);
    return this.graph.output.splice(index, 1)[0]!;
  }

  /** Removes one node (its outputs' names stay taken). */
  removeNode(node: NodeProto): void {
    const index = this.graph.node.indexOf(node);
    if (index < 0) throw new RangeError(`node ${node.name} is not in the graph`);
    this.graph.node.splice(index, 1);
  }

  /** The nodes that read `value`, in graph order. */
  consumers(value: string): NodeProto[] {
    return this.graph.node.filter((node) => readsOf(node).includes(value));
  }

  /** The node that writes `value`; null for graph inputs, initializers and unknown names. */
  producer(value: string): NodeProto | null {
    return this.graph.node.find((node) => node.output.includes(value)) ?? null;
  }

  /** Every value computed from `value`, directly or not (`value` itself included). */
  downstream(value: string): Set<string> {
    const reached = new Set<string>([value]);
    const byInput = this.#nodesByInput();
    const queue = [value];
    while (queue.length > 0) {
      for (const node of byInput.get(queue.pop()!) ?? []) {
        for (const output of node.output) {
          if (output === '' || reached.has(output)) continue;
          reached.add(output);
          queue.push(output);
        }
      }
    }
    return reached;
  }

  /**
   * Topological order (Kahn), the source order kept wherever the dependencies allow; then nodes none
   * of whose outputs is read (by a node or as a graph output) are dropped, until none is left.
   */
  finish(): void {
    pruneDeadNodes(this.graph);
    this.graph.node = topologicalOrder(this.graph);
    // Constants this editor made that no remaining node reads (the source's initializers are left as they are).
    const read = new Set<string>();
    for (const node of this.graph.node) for (const input of readsOf(node)) read.add(input);
    const made = new Set(this.#constants.values());
    this.graph.initializer = this.graph.initializer.filter((tensor) => !made.has(tensor.name) || read.has(tensor.name));
  }

  #nodesByInput(): Map<string, NodeProto[]> {
    const map = new Map<string, NodeProto[]>();
    for (const node of this.graph.node) {
      for (const input of new Set(readsOf(node))) {
        if (input === '') continue;
        const list = map.get(input);
        if (list === undefined) map.set(input, [node]);
        else list.push(node);
      }
    }
    return map;
  }
}

function valueInfo(name: string, elemType: DataType, dims: readonly OnnxDim[]): ValueInfoProto {
  return create(ValueInfoProtoSchema, {
    name,
    type: {
      value: {
        case: 'tensorType',
        value: {
          elemType,
          shape: { dim: dims.map((size) => ({ value: typeof size === 'number' ? { case: 'dimValue' as const, value: BigInt(size) } : { case: 'dimParam' as const, value: size } })) },
        },
      },
    },
  });
}

/**
 * What a node reads: its inputs and, for If/Loop/Scan, the outer-scope values its subgraphs name
 * (ONNX lets a subgraph read any value of the enclosing graph without listing it as an input).
 */
function readsOf(node: NodeProto): string[] {
  const names = [...node.input];
  for (const attribute of node.attribute) {
    for (const subgraph of [...(attribute.g === undefined ? [] : [attribute.g]), ...attribute.graphs]) collectSubgraphReads(subgraph, names);
  }
  return names;
}

function collectSubgraphReads(graph: GraphProto, names: string[]): void {
  for (const node of graph.node) names.push(...readsOf(node));
}

function pruneDeadNodes(graph: GraphProto): void {
  for (;;) {
    const read = new Set<string>(graph.output.map((info) => info.name));
    for (const node of graph.node) for (const input of readsOf(node)) read.add(input);
    const kept = graph.node.filter((node) => node.output.some((output) => output !== '' && read.has(output)));
    if (kept.length === graph.node.length) return;
    graph.node = kept;
  }
}

function topologicalOrder(graph: GraphProto): NodeProto[] {
  const producerIndex = new Map<string, number>();
  graph.node.forEach((node, index) => { for (const output of node.output) if (output !== '') producerIndex.set(output, index); });
  const waiting = graph.node.map(() => 0);
  const dependents: number[][] = graph.node.map(() => []);
  graph.node.forEach((node, index) => {
    for (const input of new Set(readsOf(node))) {
      const producer = producerIndex.get(input);
      if (producer === undefined || producer === index) continue;
      waiting[index]!++;
      dependents[producer]!.push(index);
    }
  });
  // A min-heap on the source index keeps the order stable.
  const ready = new MinHeap();
  waiting.forEach((count, index) => { if (count === 0) ready.push(index); });
  const order: NodeProto[] = [];
  while (ready.size > 0) {
    const index = ready.pop();
    order.push(graph.node[index]!);
    for (const dependent of dependents[index]!) if (--waiting[dependent]! === 0) ready.push(dependent);
  }
  if (order.length !== graph.node.length) {
    throw new RangeError(`the rewritten graph has a cycle (${graph.node.length - order.length} nodes never become ready); this is a bug in the rewrite.`);
  }
  return order;
}

class MinHeap {
  readonly #items: number[] = [];

  get size(): number {
    return this.#items.length;
  }

  push(value: number): void {
    const items = this.#items;
    items.push(value);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]! <= items[i]!) break;
      [items[parent], items[i]] = [items[i]!, items[parent]!];
      i = parent;
    }
  }

  pop(): number {
    const items = this.#items;
    const top = items[0]!;
    const last = items.pop()!;
    if (items.length > 0) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < items.length && items[left]! < items[smallest]!) smallest = left;
        if (right < items.length && items[right]! < items[smallest]!) smallest = right;
        if (smallest === i) break;
        [items[smallest], items[i]] = [items[i]!, items[smallest]!];
        i = smallest;
      }
    }
    return top;
  }
}
