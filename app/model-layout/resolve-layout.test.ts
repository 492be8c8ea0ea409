import { describe, expect, it } from 'vitest';
import { parseGenaiConfig, type GenaiConfig } from '../config/genai-config.js';
import { parseGraphFileName } from './graph-files.js';
import type { FolderListing } from './model-layout.js';
import { resolveLayout } from './resolve-layout.js';

const listing = (...paths: string[]): FolderListing => ({ folder: '/m', files: paths.map((path) => ({ path, bytes: 10 })) });
const config = { model_type: 'llama' };
const genai = (filename: string): GenaiConfig => parseGenaiConfig(JSON.stringify({ model: { type: 'llama', decoder: { filename, num_hidden_layers: 2 } } }), 'm/genai_config.json');

describe('parseGraphFileName: what the name says', () => {
  it.each([
    ['onnx/model.onnx', 'model', null],
    ['onnx/model_q4f16.onnx', 'model', 'q4f16'],
    ['onnx/model_quantized.onnx', 'model', 'q8'],
    ['onnx/decoder_model_merged_fp16.onnx', 'decoder-merged', 'fp16'],
    ['decoder_with_past_model_q2f16.onnx', 'decoder-with-past', 'q2f16'],
    ['onnx/decoder_model_int8.onnx', 'decoder', 'int8'],
    ['past.onnx', 'other', null],
    ['onnx/model_q8f16_custom.onnx', 'other', null],
  ])('%s: %s, %s', (file, role, dtype) => {
    expect(parseGraphFileName(file)).toMatchObject({ role, dtype });
  });
});

describe('resolveLayout: which config, which graph, what kind of export', () => {
  it('Hugging Face / Optimum: onnx/model.onnx first', () => {
    expect(resolveLayout({ listing: listing('config.json', 'onnx/model.onnx', 'onnx/model_fp16.onnx'), configJson: config, genai: null }))
      .toEqual({ kind: 'optimum', label: 'Hugging Face / Optimum export (config.json, onnx/model.onnx)', configFile: 'config.json', crossCheck: null, graph: 'onnx/model.onnx', prefillGraph: null, dtype: null });
  });

  it('ONNX Runtime GenAI: genai_config.json\'s filename, whatever else is there; cross-checked when config.json exists too', () => {
    const layout = resolveLayout({ listing: listing('genai_config.json', 'model.onnx', 'model.onnx.data', 'other.onnx'), configJson: null, genai: genai('model.onnx') });
    expect(layout).toMatchObject({ kind: 'ort-genai', configFile: 'genai_config.json', crossCheck: null, graph: 'model.onnx' });
    expect(resolveLayout({ listing: listing('config.json', 'genai_config.json', 'phi.onnx'), configJson: config, genai: genai('phi.onnx') }))
      .toMatchObject({ kind: 'ort-genai', configFile: 'config.json', crossCheck: 'genai_config.json', label: 'ONNX Runtime GenAI folder (config.json, phi.onnx)' });
    expect(() => resolveLayout({ listing: listing('genai_config.json', 'x.onnx'), configJson: null, genai: genai('model.onnx') }))
      .toThrow('m/genai_config.json names the decoder graph "model.onnx", which is not in /m (its graphs: x.onnx).');
  });

  it('legacy Optimum: the merged decoder before the pair; the pair as prefill + decode graphs', () => {
    const legacy = listing('config.json', 'onnx/decoder_model.onnx', 'onnx/decoder_with_past_model.onnx', 'onnx/decoder_model_merged.onnx');
    expect(resolveLayout({ listing: legacy, configJson: config, genai: null })).toMatchObject({ kind: 'optimum-merged', graph: 'onnx/decoder_model_merged.onnx' });
    expect(resolveLayout({ listing: legacy, configJson: config, genai: null, onnxFile: 'decoder_model.onnx' }))
      .toMatchObject({ kind: 'optimum-split', graph: 'onnx/decoder_with_past_model.onnx', prefillGraph: 'onnx/decoder_model.onnx' });
    // a variant pairs with its own variant
    const quantized = listing('config.json', 'onnx/decoder_model_quantized.onnx', 'onnx/decoder_with_past_model_quantized.onnx', 'onnx/decoder_with_past_model.onnx');
    expect(resolveLayout({ listing: quantized, configJson: config, genai: null, onnxFile: 'onnx/decoder_model_quantized.onnx' }))
      .toMatchObject({ graph: 'onnx/decoder_with_past_model_quantized.onnx', dtype: 'q8' });
  });

  it('transformers.js: the dtype transformers.js_config names, when there is no model.onnx', () => {
    const files = listing('config.json', 'onnx/model_q4.onnx', 'onnx/model_q4f16.onnx', 'onnx/model_fp16.onnx');
    const withDtype = { ...config, 'transformers.js_config': { dtype: 'q4f16' } };
    expect(resolveLayout({ listing: files, configJson: withDtype, genai: null }))
      .toMatchObject({ kind: 'transformers.js', graph: 'onnx/model_q4f16.onnx', dtype: 'q4f16', label: 'transformers.js variant q4f16 (config.json, onnx/model_q4f16.onnx)' });
    expect(() => resolveLayout({ listing: files, configJson: config, genai: null })).toThrow(/has several graphs and no model\.onnx/);
  });

  it('refuses a folder without any config', () => {
    expect(() => resolveLayout({ listing: listing('onnx/model.onnx'), configJson: null, genai: null })).toThrow(/has neither config\.json nor genai_config\.json/);
  });
});
