import { describe, expect, it } from 'vitest';
import { parseGenaiConfig } from '../config/genai-config.js';
import type { FolderListing } from './model-layout.js';
import { resolveLayout } from './resolve-layout.js';

/** onnxruntime-genai's split pipeline (DecoderOnlyPipelineModel): three graphs chained by genai, no decoder "filename". */
const PIPELINE_GENAI_CONFIG = {
  model: {
    type: 'phi3', vocab_size: 61, context_length: 64,
    decoder: {
      num_hidden_layers: 2, num_key_value_heads: 2, num_attention_heads: 2, head_size: 8, hidden_size: 16,
      inputs: { past_key_names: 'past_key_values.%d.key', past_value_names: 'past_key_values.%d.value' },
      outputs: { present_key_names: 'present.%d.key', present_value_names: 'present.%d.value' },
      pipeline: [
        { embeddings: { filename: 'embeds.onnx', inputs: ['input_ids'], outputs: ['inputs_embeds'] } },
        { transformer: { filename: 'transformer.onnx', inputs: ['inputs_embeds', 'attention_mask'], outputs: ['hidden_states'] } },
        { lm_head: { filename: 'lm_head.onnx', inputs: ['hidden_states'], outputs: ['logits'] } },
      ],
    },
  },
};

const listing: FolderListing = { folder: '/m', files: ['genai_config.json', 'embeds.onnx', 'transformer.onnx', 'lm_head.onnx'].map((path) => ({ path, bytes: 10 })) };

describe('an onnxruntime-genai split pipeline', () => {
  it('is read as a pipeline of named stages, not refused for a missing "filename"', () => {
    const genai = parseGenaiConfig(JSON.stringify(PIPELINE_GENAI_CONFIG), 'm/genai_config.json');
    expect(genai.decoder.pipeline).toEqual([
      { name: 'embeddings', filename: 'embeds.onnx' }, { name: 'transformer', filename: 'transformer.onnx' }, { name: 'lm_head', filename: 'lm_head.onnx' },
    ]);
    expect(parseGenaiConfig(JSON.stringify({ model: { type: 'llama', decoder: { filename: 'model.onnx', num_hidden_layers: 2 } } }), 'g').decoder.pipeline).toBeNull();
  });

  it('is refused by the layout with what kvscope cannot do and what to do instead, never "add a filename"', () => {
    const genai = parseGenaiConfig(JSON.stringify(PIPELINE_GENAI_CONFIG), 'm/genai_config.json');
    let error: (Error & { fix?: string; diagnostics?: readonly { code: string }[] }) | undefined;
    try {
      resolveLayout({ listing, configJson: null, genai });
    } catch (caught) {
      error = caught as typeof error;
    }
    expect(error?.message).toBe('m/genai_config.json declares a split pipeline of 3 graphs (embeddings: embeds.onnx, transformer: transformer.onnx, lm_head: lm_head.onnx), ' +
      'which onnxruntime-genai chains itself. kvscope runs one decoder graph (token ids in, logits and every layer\'s KV cache out), so it cannot run the model in /m.');
    expect(error?.fix).toMatch(/^Export the model as a single decoder graph/);
    expect(`${error?.message} ${error?.fix}`).not.toMatch(/"filename"/);
    expect(error?.diagnostics?.[0]?.code).toBe('layout-pipeline');
  });
});
