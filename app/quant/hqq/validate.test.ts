import { describe, expect, it } from 'vitest';
import { QuantizationError } from '../../errors.js';
import { kvTensor } from '../../tensor/kv-tensor.js';
import type { KvShape } from '../../tensor/kv-tensor.js';
import { hqqQuantizer, quantizeHqq } from './hqq.js';
import type { QuantParams } from '../types.js';

function tensor(shape: KvShape, fill = (i: number) => Math.sin(i)): ReturnType<typeof kvTensor> {
  const n = shape.reduce((a, b) => a * b, 1);
  return kvTensor(shape, 'float32', Float32Array.from({ length: n }, (_, i) => fill(i)));
}

function refusal(shape: KvShape, params: QuantParams, fill?: (i: number) => number): QuantizationError {
  try {
    hqqQuantizer.quantize(tensor(shape, fill), params);
  } catch (error) {
    expect(error).toBeInstanceOf(QuantizationError);
    return error as QuantizationError;
  }
  throw new Error(`expected HQQ to refuse ${JSON.stringify(params)} on [${shape.join(', ')}]`);
}

/** Every refusal tells the user what to do instead. */
const FIX = /choose|use |pass |fix |keep |quantize only/i;

describe('HQQ refusals', () => {
  it('quotes hqq\'s divisibility assertion verbatim (with its spelling), then explains', () => {
    const error = refusal([1, 4, 128, 64], { nbits: 4, axis: 0, groupSize: 48 });
    expect(error.message.startsWith('group_size should be divisble by the total tensor dimensions. shape: torch.Size([1, 4, 128, 64]), group_size: 48')).toBe(true);
    expect(error.message).toMatch(FIX);
    expect(error.message).toMatch(/64/);
  });

  it('quotes transformers\' bit-width message', () => {
    for (const nbits of [0, 5, 6, 1.58, 16]) {
      const error = refusal([1, 1, 2, 64], { nbits, axis: 0, groupSize: 64 });
      expect(error.message.startsWith(`\`nbits\` for \`HQQ\` backend has to be one of [\`1\`, \`2\`, \`3\`, \`4\`, \`8\`] but got ${nbits}`)).toBe(true);
      expect(error.message).toMatch(FIX);
    }
  });

  it('quotes hqq\'s axis assertion', () => {
    const error = refusal([1, 1, 2, 64], { nbits: 4, axis: -1, groupSize: 64 });
    expect(error.message.startsWith('axis should be either 0 or 1')).toBe(true);
    expect(error.message).toMatch(FIX);
  });

  it('refuses group sizes that are not positive integers', () => {
    for (const groupSize of [0, -64, 1.5, Number.NaN]) {
      const error = refusal([1, 1, 2, 64], { nbits: 4, axis: 0, groupSize });
      expect(error.message).toMatch(/positive integer/);
      expect(error.message).toMatch(FIX);
    }
  });

  it('refuses an empty tensor', () => {
    expect(refusal([1, 1, 0, 64], { nbits: 4, axis: 0, groupSize: 64 }).message).toMatch(/empty/);
  });

  it('refuses 3 bits with axis 1, which hqq cannot dequantize for 4-D tensors', () => {
    const error = refusal([1, 2, 8, 64], { nbits: 3, axis: 1, groupSize: 64 });
    expect(error.message).toMatch(/3-bit.*axis 1/);
    expect(error.message).toMatch(/axis 0/);
    expect(() => hqqQuantizer.quantize(tensor([1, 2, 8, 64]), { nbits: 3, axis: 0, groupSize: 64 })).not.toThrow();
  });

  it('refuses row counts that bit packing would broadcast', () => {
    // axis 1: N/g rows must divide by 2 (4-bit), 4 (2-bit), 8 (1-bit)
    const odd = refusal([1, 1, 3, 64], { nbits: 4, axis: 1, groupSize: 64 });
    expect(odd.message).toMatch(/divisible by 2.*N \/ group_size = 192 \/ 64 = 3/);
    expect(odd.message).toMatch(/axis 0/);
    expect(refusal([1, 1, 6, 64], { nbits: 2, axis: 1, groupSize: 64 }).message).toMatch(/divisible by 4/);
    expect(refusal([1, 1, 4, 64], { nbits: 1, axis: 1, groupSize: 64 }).message).toMatch(/divisible by 8/);
    // axis 0: the group size is the row count
    const small = refusal([1, 1, 3, 64], { nbits: 4, axis: 0, groupSize: 3 });
    expect(small.message).toMatch(/the group size, 3/);
    expect(small.message).toMatch(FIX);
    // 3 and 8 bits have no such constraint
    expect(() => hqqQuantizer.quantize(tensor([1, 1, 3, 64]), { nbits: 8, axis: 1, groupSize: 64 })).not.toThrow();
  });

  for (const shape of [[1, 2, 16, 64], [1, 1, 3, 40]] as KvShape[]) {
    for (const bad of [Number.NaN, Infinity, -Infinity]) {
      it(`refuses ${bad} in a [${shape.join(', ')}] tensor with both engines, naming its index`, () => {
        const fill = (i: number): number => (i === 77 ? bad : Math.cos(i));
        for (const engine of ['js', 'auto'] as const) {
          const n = shape.reduce((a, b) => a * b, 1);
          const x = tensor(shape, fill);
          expect(() => quantizeHqq(x, { nbits: 4, axis: 0, groupSize: n === 2048 ? 64 : 8 }, { engine })).toThrow(QuantizationError);
          expect(() => quantizeHqq(x, { nbits: 4, axis: 0, groupSize: n === 2048 ? 64 : 8 }, { engine })).toThrow(/flat index 77/);
        }
      });
    }
  }

  it('refuses to force the WebAssembly engine on a layout it does not cover', () => {
    expect(() => quantizeHqq(tensor([1, 1, 3, 40]), { nbits: 4, axis: 0, groupSize: 8 }, { engine: 'wasm' })).toThrow(/engine "auto" or "js"/);
  });
});
