import { describe, expect, it } from 'vitest';
import { decodeModel } from '../onnx/onnx-model.js';
import type { SCALE_MODEL_KINDS } from './scale-specs.js';
import { scaleWeightPlan, weightChunks } from './scale-weights.js';
import { buildSyntheticModel, SYNTHETIC_DATA_PATH, SYNTHETIC_ONNX_PATH } from './synthetic-model.js';
import { syntheticModelSpec } from './synthetic-spec.js';
import { syntheticTokenizer } from './synthetic-tokenizer.js';

/** The folder of a scale model without drawing its weights (the data file is streamed, and not asked for here). */
function folder(kind: (typeof SCALE_MODEL_KINDS)[number]) {
  const files = buildSyntheticModel(kind).files;
  const text = (path: string) => JSON.parse(files.find((file) => file.path === path)!.content as string) as Record<string, unknown>;
  const onnx = files.find((file) => file.path === SYNTHETIC_ONNX_PATH)!.content as Uint8Array;
  const data = files.find((file) => file.path === SYNTHETIC_DATA_PATH)!.content as { bytes: number };
  return { config: text('config.json'), tokenizer: text('tokenizer.json'), graph: decodeModel(onnx).graph!, dataBytes: data.bytes };
}

function dimsOf(graph: ReturnType<typeof folder>['graph'], name: string): number[] | undefined {
  return graph.initializer.find((tensor) => tensor.name === name)?.dims.map(Number);
}

describe('scale models: real geometries and vocabularies', () => {
  it("synthetic-qwen2.5-0.5b has Qwen2.5-0.5B's config, parameter count and a 151,936-token tokenizer", () => {
    const { config, tokenizer, graph, dataBytes } = folder('synthetic-qwen2.5-0.5b');
    expect(config).toMatchObject({
      architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', num_hidden_layers: 24, hidden_size: 896, intermediate_size: 4864,
      num_attention_heads: 14, num_key_value_heads: 2, head_dim: 64, vocab_size: 151_936, tie_word_embeddings: true, torch_dtype: 'float32',
      rope_theta: 1_000_000, rms_norm_eps: 1e-6, use_sliding_window: false,
    });
    expect(Object.keys((tokenizer['model'] as { vocab: object }).vocab)).toHaveLength(151_936);
    expect(dimsOf(graph, 'model.embed_tokens.weight')).toEqual([151_936, 896]);
    expect(dimsOf(graph, 'lm_head.weight.T')).toBeUndefined(); // tied: the head reads the embedding
    expect(dimsOf(graph, 'model.layers.23.self_attn.k_proj.bias')).toEqual([128]);
    expect(dimsOf(graph, 'model.layers.23.self_attn.q_proj.weight.T')).toEqual([896, 896]);
    expect(dimsOf(graph, 'model.layers.23.mlp.down_proj.weight.T')).toEqual([4864, 896]);
    // Qwen2.5-0.5B's 494,032,768 parameters, plus kvscope's [vocab] logit bias
    expect(dataBytes).toBe(4 * (494_032_768 + 151_936));
    expect(graph.input.map((input) => input.name)).toContain('num_logits_to_keep');
  });

  it('synthetic-llama3.2-1b and synthetic-8b-kv-128k have the 128,256-token vocabulary and their KV geometry', () => {
    const llama = folder('synthetic-llama3.2-1b');
    expect(llama.config).toMatchObject({
      model_type: 'llama', num_hidden_layers: 16, hidden_size: 2048, intermediate_size: 8192, num_attention_heads: 32,
      num_key_value_heads: 8, head_dim: 64, vocab_size: 128_256, tie_word_embeddings: true,
    });
    // Llama-3.2-1B's 1,235,814,400 parameters, plus the logit bias
    expect(llama.dataBytes).toBe(4 * (1_235_814_400 + 128_256));
    const kv = folder('synthetic-8b-kv-128k');
    expect(kv.config).toMatchObject({ num_hidden_layers: 32, num_key_value_heads: 8, head_dim: 128, vocab_size: 128_256 });
    expect(dimsOf(kv.graph, 'lm_head.weight.T')).toEqual([64, 128_256]);
    const pastValue = kv.graph.input.find((input) => input.name === 'past_key_values.31.value')!;
    const dims = pastValue.type?.value.case === 'tensorType' ? pastValue.type.value.value.shape?.dim.map((dim) => dim.value.value) : [];
    expect(dims).toEqual(['batch_size', 8n, 'past_sequence_length', 128n]);
  });

  it('lays the external data out tensor after tensor, and the graph points at each one', () => {
    const spec = syntheticModelSpec('synthetic-8b-kv-128k');
    const plan = scaleWeightPlan(spec, syntheticTokenizer(spec).mutedTokenIds);
    let offset = 0;
    for (const tensor of plan.tensors) {
      expect(tensor.offset).toBe(offset);
      offset += 4 * tensor.count;
    }
    expect(plan.totalBytes).toBe(offset);
    const { graph } = folder('synthetic-8b-kv-128k');
    const external = graph.initializer.filter((tensor) => tensor.externalData.length > 0);
    expect(external).toHaveLength(plan.tensors.length);
    const ends = external.map((tensor) => {
      const entry = (key: string) => Number(tensor.externalData.find((item) => item.key === key)?.value);
      return entry('offset') + entry('length');
    });
    expect(Math.max(...ends)).toBe(plan.totalBytes);
  });

  it('streams weights that are the same on every build, with outlier key columns and muted logits', () => {
    const spec = syntheticModelSpec('synthetic-8b-kv-128k');
    const muted = syntheticTokenizer(spec).mutedTokenIds;
    const plan = scaleWeightPlan(spec, muted);
    const collect = (): Float32Array => {
      const bytes = new Uint8Array(plan.totalBytes);
      let at = 0;
      for (const chunk of weightChunks(spec, plan)) {
        bytes.set(chunk, at);
        at += chunk.byteLength;
      }
      expect(at).toBe(plan.totalBytes);
      return new Float32Array(bytes.buffer);
    };
    const first = collect();
    // byte for byte (toEqual over 30M floats would take minutes)
    expect(Buffer.compare(new Uint8Array(collect().buffer), new Uint8Array(first.buffer))).toBe(0);
    const bias = plan.tensors.at(-1)!;
    const logitBias = first.subarray(bias.offset / 4, bias.offset / 4 + bias.count);
    expect(logitBias[muted[0]!]).toBe(-100);
    expect(logitBias[600]).toBe(0);
    const kProj = plan.tensors.find((tensor) => tensor.stream === 'model.layers.0.self_attn.k_proj')!;
    const values = first.subarray(kProj.offset / 4, kProj.offset / 4 + kProj.count);
    const width = spec.numKeyValueHeads * spec.headDim;
    const columnRms = (column: number) => Math.sqrt(Array.from({ length: spec.hiddenSize }, (_, row) => values[row * width + column]! ** 2).reduce((a, b) => a + b) / spec.hiddenSize);
    const [outlier] = plan.weights.layers[0]!.outlierKeyChannels;
    const ordinary = Array.from({ length: spec.headDim }, (_, c) => c).find((c) => !plan.weights.layers[0]!.outlierKeyChannels.includes(c))!;
    expect(columnRms(outlier!) / columnRms(ordinary)).toBeGreaterThan(5);
  });
});
