import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../../app/preflight/diagnostic.js';
import { layerRefusals } from './layer-refusals.js';

const error = (code: Diagnostic['code'], layers: number[]): Diagnostic => ({ code, severity: 'error', origin: 'kvscope', message: code, layers });

describe('layerRefusals', () => {
  it('puts the layer map\'s own findings on their rows, and other errors only where every layer they name is set by the map', () => {
    const diagnostics: Diagnostic[] = [
      error('kv-format-refused', [3, 4]),
      error('invalid-layer-map', [2]),
      error('hqq-3bit-axis-1', [5, 6]), // the map's 3-bit layers
      error('invalid-group-size', [0, 1, 2, 3, 4, 5, 6, 7]), // the whole cache: the run check's, not a row's
      { ...error('invalid-layer-map', [7]), severity: 'warning' },
      error('invalid-nbits', []),
    ];
    const map = [2, 3, 4, 5, 6].map((layer) => ({ layer, fullPrecision: true as const }));
    const rows = layerRefusals(diagnostics, map);
    expect([...rows.keys()].sort()).toEqual([2, 3, 4, 5, 6]);
    expect(rows.get(3)!.map((d) => d.code)).toEqual(['kv-format-refused']);
    expect(rows.get(5)!.map((d) => d.code)).toEqual(['hqq-3bit-axis-1']);
    expect(rows.get(0)).toBeUndefined();
    expect(layerRefusals(diagnostics, undefined).get(5)).toBeUndefined();
  });
});
