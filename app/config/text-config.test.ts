import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.js';
import { getTextConfig } from './text-config.js';

const MULTIPLE_VERBATIM =
  "Multiple valid text configs were found in the model config: ['decoder', 'text_config']. In this case, using " +
  '`get_text_config()` would be ambiguous. Please specify the desired text config directly, e.g. `text_config = config.sub_config_name`';

describe('getTextConfig (spec §2.1)', () => {
  it('returns a plain decoder config itself', () => {
    const config = { model_type: 'llama', num_hidden_layers: 2 };
    expect(getTextConfig(config, { decoder: true })).toBe(config);
  });

  it("returns a multimodal wrapper's text_config", () => {
    const text = { model_type: 'gemma3_text', num_hidden_layers: 34 };
    expect(getTextConfig({ model_type: 'gemma3', text_config: text, vision_config: {} }, { decoder: true })).toBe(text);
  });

  it('ignores sub-configs that are null', () => {
    const text = { num_hidden_layers: 3 };
    expect(getTextConfig({ decoder: null, generator: null, text_config: text }, { decoder: true })).toBe(text);
  });

  it('raises the verbatim ambiguity error, then kvscope explanation, listing names in search order', () => {
    const run = () => getTextConfig({ text_config: {}, decoder: {} }, { decoder: true });
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(MULTIPLE_VERBATIM);
    try {
      run();
    } catch (error) {
      const [first, second] = (error as Error).message.split('\n');
      expect(first).toBe(MULTIPLE_VERBATIM);
      expect(second).toMatch(/^kvscope: /);
    }
  });

  it('searches text_encoder only when both or neither of decoder/encoder are set', () => {
    const config = { text_encoder: { a: 1 }, text_config: { b: 2 } };
    expect(getTextConfig(config, { decoder: true })).toEqual({ b: 2 });
    expect(getTextConfig(config, { encoder: true })).toEqual({ a: 1 });
    expect(() => getTextConfig(config)).toThrow("['text_encoder', 'text_config']");
  });

  it('renames legacy flat encoder-decoder keys for the decoder, through the attribute map', () => {
    const bart = {
      model_type: 'bart', is_encoder_decoder: true, d_model: 1024,
      encoder_layers: 12, decoder_layers: 6, encoder_attention_heads: 16, decoder_attention_heads: 8,
      decoder_ffn_dim: 4096, decoder_start_token_id: 2,
    };
    const text = getTextConfig(bart, { decoder: true });
    expect(text['num_hidden_layers']).toBe(6);
    // bart maps num_attention_heads to encoder_attention_heads, so the decoder's count lands there.
    expect(text['encoder_attention_heads']).toBe(8);
    expect(text['ffn_dim']).toBe(4096);
    expect(text['start_token_id']).toBe(2);
    expect(text['decoder_layers']).toBeUndefined();
    expect(text['decoder_attention_heads']).toBeUndefined();
    expect(text['encoder_layers']).toBe(12);
    expect(bart.decoder_layers).toBe(6);
  });

  it('keeps the encoder side when asked for the encoder', () => {
    const text = getTextConfig({ is_encoder_decoder: true, encoder_layers: 12, decoder_layers: 6 }, { encoder: true });
    expect(text['num_hidden_layers']).toBe(12);
    expect(text['decoder_layers']).toBe(6);
  });

  it('leaves a flat encoder-decoder alone when neither side is asked for', () => {
    const config = { is_encoder_decoder: true, decoder_layers: 6 };
    expect(getTextConfig(config)).toBe(config);
  });

  it('refuses a text_config that is not an object', () => {
    expect(() => getTextConfig({ text_config: 'gemma' }, { decoder: true })).toThrow('`text_config` should be the text model\'s config (an object) but is "gemma"');
  });
});
