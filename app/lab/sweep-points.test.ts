import { describe, expect, it } from 'vitest';
import { expandSweep, parseShard, shardPoints } from './sweep-points.js';
import { checkSweepSpec, parseSweepSpec, type EvalOptionTable } from './sweep-spec.js';

/** A stand-in for eval's option table: the sweep reads whatever options eval has, including ones added later. */
const OPTIONS: EvalOptionTable = {
  model: { type: 'string' }, backend: { type: 'string' }, nbits: { type: 'string' }, 'group-size': { type: 'string' },
  'residual-length': { type: 'string' }, cache: { type: 'string' }, 'nbits-key': { type: 'string' }, 'quantize-layers': { type: 'string' },
  'quantize-parts': { type: 'string' }, windows: { type: 'string' }, 'some-switch': { type: 'boolean' }, out: { type: 'string' }, json: { type: 'boolean' },
};

describe('sweep specs', () => {
  it('takes any option of eval as a key, an option added later (nbits-key) as well', () => {
    const spec = checkSweepSpec({ model: 'm', fixed: { 'nbits-key': 8, 'some-switch': true }, grid: { nbits: [2, 4] } }, OPTIONS, 'sweep.json');
    const points = expandSweep(spec, 0);
    expect(points.map((p) => p.options)).toEqual([
      { nbits: 2, 'nbits-key': 8, 'some-switch': true },
      { nbits: 4, 'nbits-key': 8, 'some-switch': true },
    ]);
    expect(points.map((p) => p.name)).toEqual(['nbits-2', 'nbits-4']);
  });

  it('refuses keys eval does not have, with the list of those it has, and reserved keys', () => {
    expect(() => checkSweepSpec({ model: 'm', grid: { bits: [2] } }, OPTIONS, 'sweep.json')).toThrow(/"bits" is not an option of kvscope eval/);
    expect(() => checkSweepSpec({ model: 'm', fixed: { out: 'x' } }, OPTIONS, 'sweep.json')).toThrow(/"out" is not a sweep key/);
    expect(() => checkSweepSpec({ model: 'm', fixed: { 'some-switch': 'yes' } }, OPTIONS, 'sweep.json')).toThrow(/is a switch; give true or false/);
    expect(() => checkSweepSpec({ model: 'm', grid: { nbits: [] } }, OPTIONS, 'sweep.json')).toThrow(/non-empty list/);
    expect(() => parseSweepSpec('{', OPTIONS, 'sweep.json')).toThrow(/sweep.json is not valid JSON/);
    expect(() => checkSweepSpec({ model: 'm', extra: 1 }, OPTIONS, 'sweep.json')).toThrow(/unknown key "extra"/);
  });

  it('is the union of the grid and the points, duplicates once, named from the keys that vary', () => {
    const spec = checkSweepSpec({
      model: 'm', fixed: { windows: 2 }, grid: { backend: ['quanto', 'hqq'], nbits: [2, 4] },
      points: [{ backend: 'hqq', nbits: 4 }, { backend: 'hqq', nbits: 8, 'group-size': 32 }],
    }, OPTIONS, 'sweep.json');
    const points = expandSweep(spec, 0);
    expect(points).toHaveLength(5);
    expect(points.map((p) => p.index)).toEqual([0, 1, 2, 3, 4]);
    expect(points.map((p) => p.name)).toEqual(['backend-quanto_nbits-2', 'backend-quanto_nbits-4', 'backend-hqq_nbits-2', 'backend-hqq_nbits-4', 'backend-hqq_group-size-32_nbits-8']);
    expect(points.every((p) => p.options['windows'] === 2)).toBe(true);
  });

  it('the layers preset quantizes one layer at a time, K, V and both, crossed with the grid; kv compares the sides', () => {
    const layers = expandSweep(checkSweepSpec({ model: 'm', grid: { nbits: [2, 4] }, preset: 'layers' }, OPTIONS, 's'), 3);
    expect(layers).toHaveLength(2 * 3 * 3);
    expect(layers[0]!.options).toEqual({ nbits: 2, 'quantize-layers': '0', 'quantize-parts': 'key' });
    expect(layers[5]!.options).toEqual({ nbits: 2, 'quantize-layers': '1', 'quantize-parts': 'both' });
    const kv = expandSweep(checkSweepSpec({ model: 'm', preset: 'kv' }, OPTIONS, 's'), 0);
    expect(kv.map((p) => p.options['quantize-parts'])).toEqual(['key', 'value', 'both']);
  });

  it('the runtimes preset: transformers\' quanto and HQQ 4-bit next to every runtime format, one point each, crossed with the grid', () => {
    const options: EvalOptionTable = { ...OPTIONS, 'kv-format': { type: 'string' } };
    const points = expandSweep(checkSweepSpec({ model: 'm', preset: 'runtimes' }, options, 's'), 0);
    expect(points.map((p) => p.name)).toEqual([
      'backend-quanto_nbits-4', 'backend-hqq_nbits-4', 'kv-format-llama.cpp-q8_0', 'kv-format-llama.cpp-q8_0-rot', 'kv-format-llama.cpp-q4_0',
      'kv-format-llama.cpp-q4_0-rot', 'kv-format-vllm-fp8_e4m3', 'kv-format-vllm-fp8_e5m2', 'kv-format-nvfp4', 'kv-format-mlx-4bit-g64',
      'kv-format-ort-webgpu-q8', 'kv-format-ort-webgpu-q4',
    ]);
    expect(points[4]!.options).toEqual({ 'kv-format': 'llama.cpp:q4_0' });
    const crossed = expandSweep(checkSweepSpec({ model: 'm', grid: { windows: [1, 2] }, preset: 'runtimes' }, options, 's'), 0);
    expect(crossed).toHaveLength(24);
  });

  it('shards take every N-th point, together exactly the sweep', () => {
    const points = expandSweep(checkSweepSpec({ model: 'm', grid: { nbits: [1, 2, 3, 4, 5, 6, 7] } }, OPTIONS, 's'), 0);
    const shards = [1, 2, 3].map((index) => shardPoints(points, { index, count: 3 }).map((p) => p.index));
    expect(shards).toEqual([[0, 3, 6], [1, 4], [2, 5]]);
    expect(parseShard('2/3')).toEqual({ index: 2, count: 3 });
    expect(() => parseShard('4/3')).toThrow(/1 ≤ i ≤ N/);
    expect(() => parseShard('x')).toThrow(/i\/N/);
  });
});
