import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../../app/cache/cache-config.js';
import { parseModelConfig } from '../../../app/config/parse-model-config.js';
import { sharedDir } from '../../../app/node/golden.js';
import { plannedLayers } from './LayerStrip.js';

/** stories260k: 5 full-attention layers. */
const config = parseModelConfig(readFileSync(join(sharedDir(), 'models', 'stories260k', 'config.json'), 'utf8'), 'stories260k/config.json');

describe('the layer strip\'s plan', () => {
  it('shows the layers the kvscope extensions keep in full precision as such, as the cache plan decides', () => {
    const quantization = { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, extensions: { fullPrecisionFirstLayers: 1, layerMap: [{ layer: 3, fullPrecision: true as const }] } };
    expect(plannedLayers(config, { cacheMode: 'quantized', quantization })).toEqual(['full-precision', 'quantized', 'quantized', 'full-precision', 'quantized']);
    expect(plannedLayers(config, { cacheMode: 'quantized', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS })).toEqual(Array(5).fill('quantized'));
    expect(plannedLayers(config, { cacheMode: 'dynamic', quantization })).toEqual(Array(5).fill('full-precision'));
  });
});
