import { describe, expect, it } from 'vitest';
import { firstFailingQuantize } from './quantize-lengths.js';
import { quantizeShapeRule, requiredMultiple } from './shape-rules.js';

const STORIES = { batch: 1, heads: 4, headDim: 8 };

describe('quantize shape rules (spec §3.1 step 1, §3.2)', () => {
  it('quanto axis -1 groups B·H·S rows: with H=4 and g=64, S must be a multiple of 16', () => {
    const rule = quantizeShapeRule('quanto', -1, 4, 64, STORIES);
    expect(requiredMultiple(rule)).toBe(16);
    expect(rule.check(16)).toBeNull();
    expect(rule.check(37)).toMatchObject({ code: 'quanto-group-size-divisor', text: 'Group size (64) must be a divisor of (148)', detail: 'B·H·S = 1·4·37 = 148' });
    expect(rule.check(8)).toMatchObject({ code: 'group-larger-than-tensor', text: 'Group size (64) must be a divisor of (32)' });
  });

  it('quanto axis 0 groups H·S·D values: D=8 < g=64 makes odd lengths fail', () => {
    const rule = quantizeShapeRule('quanto', 0, 4, 64, STORIES);
    expect(requiredMultiple(rule)).toBe(2);
    expect(rule.check(37)?.text).toBe('Group size (64) must be a divisor of (1184)');
    expect(quantizeShapeRule('quanto', 0, 4, 64, { batch: 1, heads: 8, headDim: 128 }).check(37)).toBeNull();
  });

  it('the batch counts on axis -1 but not on quanto axis 0', () => {
    expect(requiredMultiple(quantizeShapeRule('quanto', -1, 4, 64, { ...STORIES, batch: 4 }))).toBe(4);
    expect(requiredMultiple(quantizeShapeRule('quanto', 0, 4, 64, { ...STORIES, batch: 4 }))).toBe(2);
  });

  it('hqq needs N divisible by g and, on axis 1, N/g rows that fill the packing planes', () => {
    const axis1 = quantizeShapeRule('hqq', 1, 4, 64, STORIES);
    expect(requiredMultiple(axis1)).toBe(4);
    expect(axis1.check(3)).toMatchObject({ code: 'hqq-group-size-divisor', text: 'group_size should be divisble by the total tensor dimensions. shape: torch.Size([1, 4, 3, 8]), group_size: 64' });
    expect(axis1.check(2)).toMatchObject({ code: 'hqq-bitpack-rows', detail: 'N/g = 1' });
    expect(axis1.check(4)).toBeNull();
    expect(requiredMultiple(quantizeShapeRule('hqq', 1, 2, 64, STORIES))).toBe(8);
    expect(requiredMultiple(quantizeShapeRule('hqq', 1, 1, 64, STORIES))).toBe(16);
    expect(requiredMultiple(quantizeShapeRule('hqq', 1, 8, 64, STORIES))).toBe(2);
    expect(quantizeShapeRule('hqq', 0, 4, 64, STORIES).check(2)).toBeNull();
  });
});

describe('firstFailingQuantize (prefill, then every max(R, 2) steps; spec §1.3)', () => {
  const rule = quantizeShapeRule('quanto', -1, 4, 64, STORIES);

  it('fails at prefill when the prompt is not a multiple', () => {
    expect(firstFailingQuantize(rule, 37, 128)).toMatchObject({ seq: 37, step: 0 });
  });

  it('fails at the first flush when the prompt passes but the period is not a multiple', () => {
    expect(firstFailingQuantize(rule, 16, 100)).toMatchObject({ prompt: 16, seq: 116, step: 100, failure: { text: 'Group size (64) must be a divisor of (464)' } });
  });

  it('passes for every flush when both are multiples', () => {
    expect(firstFailingQuantize(rule, 32, 128)).toBeNull();
    expect(firstFailingQuantize(rule, 32, 2)).toMatchObject({ seq: 34, step: 2 });
  });

  it('checks only the prefill when the residual length is invalid', () => {
    expect(firstFailingQuantize(rule, 16, null)).toBeNull();
  });
});
