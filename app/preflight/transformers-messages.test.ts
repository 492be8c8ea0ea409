import { describe, expect, it } from 'vitest';
import { layerTypesAsPythonSet, onlyFullAttentionMessage, unknownBackendMessage } from './transformers-messages.js';

describe('QuantizedCache messages, verbatim (spec §1.2)', () => {
  it('unknown backend', () => {
    expect(unknownBackendMessage('HQQ')).toBe('Unknown quantization backend `HQQ`');
  });

  it('only full attention, with a Python set repr', () => {
    expect(onlyFullAttentionMessage(['sliding_attention'])).toBe(
      '`QuantizedCache` is only supported for models with only full attention layers. We found the following invalid layer types: {\'sliding_attention\'}',
    );
    expect(layerTypesAsPythonSet(['mlp', 'linear_attention', 'mlp'])).toBe("{'linear_attention', 'mlp'}");
  });
});
