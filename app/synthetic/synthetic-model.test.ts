import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { OnnxDataType } from '../onnx/element-types.js';
import { decodeModel, type ModelProto } from '../onnx/onnx-model.js';
import { buildSyntheticModel, SYNTHETIC_ONNX_PATH, type SyntheticModelFolder } from './synthetic-model.js';
import { SYNTHETIC_FORMAT_VERSION, type SyntheticModelKind } from './synthetic-spec.js';

/**
 * sha256 of onnx/model.onnx per format version. A generator change that moves these must bump
 * SYNTHETIC_FORMAT_VERSION (cached folders are keyed by it, so users get the new model) and record
 * the new hashes here.
 */
const PINNED_ONNX_SHA256: Record<number, Partial<Record<SyntheticModelKind, string>>> = {
  1: {
    'synthetic': 'a79fc584bb05de2c2838913d8d747faf81de3a97e562c9c45facbefcce7b8f7e',
    'synthetic-hybrid': '086ca66411c9f23747922f624751cae2f47af3113ccd57529d8e8b6eaedbf3da',
  },
  // v2: written with onnx-buf (onnx.proto 1.20): repeated int64 attributes unpacked as onnx.proto
  // declares them, the opset's empty domain written; the same graph and weights as v1.
  2: {
    'synthetic': 'e41891683007b39d2ee2b5ebc912facefd9e2590c2fca213239050affa87cfcc',
    'synthetic-hybrid': 'def77a8254378fb774bacb93896a1764d522c67ced981959f41145e8bb01b398',
    // added in v2 (the other kinds' bytes unchanged)
    'synthetic-8b-kv': '26e160409d0cad5fab2d3556e2c6a57dfff9e105ee9c26d4e541758db771a61b',
    // the retrieval testbed, added in v2: weights set by construction (retrieval-testbed-weights.ts)
    'synthetic-retrieval': 'b70591fae6d5c10af76f6c38c98f9711f93915403a6250e511e71a8a35d0d4a5',
  },
};

/** The ops a Llama export uses: all in the default domain, all run by ORT's CPU and WebGPU EPs. */
const STANDARD_OPS = new Set([
  'Add', 'And', 'Cast', 'Concat', 'Cos', 'Div', 'Gather', 'Greater', 'LessOrEqual', 'MatMul', 'Mul', 'Neg', 'Pow',
  'Range', 'Reciprocal', 'ReduceMean', 'Reshape', 'Shape', 'Sigmoid', 'Sin', 'Softmax', 'Split', 'Sqrt', 'Squeeze',
  'Sub', 'Tile', 'Transpose', 'Unsqueeze', 'Where',
]);

const built = new Map<SyntheticModelKind, { folder: SyntheticModelFolder; ms: number }>();
function build(kind: SyntheticModelKind): { folder: SyntheticModelFolder; ms: number } {
  const cached = built.get(kind);
  if (cached !== undefined) return cached;
  const start = performance.now();
  const folder = buildSyntheticModel(kind);
  const result = { folder, ms: performance.now() - start };
  built.set(kind, result);
  return result;
}

function onnxBytes(kind: SyntheticModelKind): Uint8Array {
  const file = build(kind).folder.files.find((candidate) => candidate.path === SYNTHETIC_ONNX_PATH);
  if (file === undefined || !(file.content instanceof Uint8Array)) throw new Error('no onnx/model.onnx');
  return file.content;
}

function decoded(kind: SyntheticModelKind): ModelProto {
  return decodeModel(onnxBytes(kind));
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

describe('buildSyntheticModel', () => {
  it('synthetic-8b-kv has Llama-3-8B\'s KV geometry on a small body: 32 layers, 8 KV heads of 128, 8,192 positions', () => {
    const folder = build('synthetic-8b-kv').folder;
    const config = JSON.parse(folder.files.find((file) => file.path === 'config.json')!.content as string) as Record<string, unknown>;
    expect(config).toMatchObject({ num_hidden_layers: 32, num_key_value_heads: 8, head_dim: 128, hidden_size: 64, vocab_size: 512, max_position_embeddings: 8192, torch_dtype: 'float32' });
    expect(config).not.toHaveProperty('layer_types');
    const graph = decoded('synthetic-8b-kv').graph!;
    const past = graph.input.filter((input) => input.name.startsWith('past_key_values.'));
    expect(past).toHaveLength(64);
    const dims = past[0]!.type?.value.case === 'tensorType' ? past[0]!.type.value.value.shape!.dim.map((d) => (d.value.case === 'dimValue' ? Number(d.value.value) : d.value.value)) : [];
    expect(dims).toEqual(['batch_size', 8, 'past_sequence_length', 128]);
    // small enough to build and run here: 9.4M parameters
    expect(onnxBytes('synthetic-8b-kv').byteLength).toBeLessThan(40e6);
  });

  it('writes the Hugging Face folder layout in a few seconds', () => {
    const { folder, ms } = build('synthetic');
    expect(folder.files.map((file) => file.path)).toEqual([
      'config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx',
    ]);
    expect(ms).toBeLessThan(5000);
    // 23.5M float32 parameters
    expect(onnxBytes('synthetic').byteLength).toBeGreaterThan(94e6);
    expect(onnxBytes('synthetic').byteLength).toBeLessThan(96e6);
  });

  it('is deterministic: the bytes pinned for this format version, on any machine, in any run', () => {
    expect({
      'synthetic': sha256(onnxBytes('synthetic')),
      'synthetic-hybrid': sha256(onnxBytes('synthetic-hybrid')),
      'synthetic-8b-kv': sha256(onnxBytes('synthetic-8b-kv')),
      'synthetic-retrieval': sha256(onnxBytes('synthetic-retrieval')),
    }, 'the generator changed: bump SYNTHETIC_FORMAT_VERSION and pin the new hashes').toEqual(PINNED_ONNX_SHA256[SYNTHETIC_FORMAT_VERSION]);
  });

  it('is an opset-17 graph of standard ops, with no KV expansion and no casts on the cache', () => {
    const model = decoded('synthetic');
    expect(model.irVersion).toBe(8n);
    expect(model.opsetImport.map((opset) => [opset.domain, opset.version])).toEqual([['', 17n]]);
    const graph = model.graph!;
    const ops = graph.node.map((node) => node.opType);
    expect(ops.filter((op) => !STANDARD_OPS.has(op))).toEqual([]);
    expect(graph.node.every((node) => node.domain === '')).toBe(true);
    expect(ops).not.toContain('Expand');
    // int64 → float for RoPE positions, int64 → bool for the padding mask: nothing else
    expect(ops.filter((op) => op === 'Cast')).toHaveLength(2);
    // the present.* outputs come straight from a Concat of the past input and the new keys/values
    for (const node of graph.node.filter((candidate) => candidate.output[0]?.startsWith('present.'))) {
      expect(node.opType).toBe('Concat');
      expect(node.input[0]).toMatch(/^past_key_values\.\d+\.(key|value)$/);
    }
  });

  it('holds 23.5M float32 parameters under HF names, with the mask built once per layer kind', () => {
    const model = decoded('synthetic-hybrid');
    const graph = model.graph!;
    const elements = (dims: readonly bigint[]): number => dims.reduce((a, b) => a * Number(b), 1);
    const parameters = graph.initializer
      .filter((tensor) => tensor.dataType === OnnxDataType.FLOAT && tensor.dims.length > 0 && elements(tensor.dims) > 64);
    const count = parameters.reduce((sum, tensor) => sum + elements(tensor.dims), 0);
    expect(count).toBe(512 * 512 * 2 + 8 * (512 * 512 * 2 + 512 * 256 * 2 + 3 * 512 * 1376 + 2 * 512) + 512 + 512);
    const names = new Set(parameters.map((tensor) => tensor.name));
    expect(names).toContain('model.embed_tokens.weight');
    expect(names).toContain('model.layers.7.self_attn.k_proj.weight.T');
    expect(names).toContain('lm_head.weight.T');
    // one causal mask and one sliding-window mask, shared by the layers of each kind
    expect(graph.node.filter((node) => node.opType === 'LessOrEqual')).toHaveLength(2);
    expect(graph.node.filter((node) => node.opType === 'Greater')).toHaveLength(1);
    expect(decoded('synthetic').graph!.node.filter((node) => node.opType === 'Greater')).toHaveLength(0);
  });
});
