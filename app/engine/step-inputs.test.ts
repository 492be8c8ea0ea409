import { describe, expect, it } from 'vitest';
import type { DecoderIo } from './decoder-io.js';
import { StepInputs } from './step-inputs.js';

const io = (patch: Partial<DecoderIo>): DecoderIo => ({
  inputIds: 'input_ids', inputIdsType: 'int64', attentionMask: 'attention_mask', attentionMaskType: 'int64', positionIds: 'position_ids',
  positionIdsType: 'int64', logitsToKeep: null, useCacheBranch: null, logits: 'logits', logitsType: 'float32', logitsShape: [1, 's', 10],
  kvLayers: [], kvDtype: null, states: [], presentMayExceedValidLength: false, ...patch,
});

describe('StepInputs: the integer types the graph declares, and use_cache_branch', () => {
  it('feeds int32 ids, mask and positions to a graph that declares them int32', () => {
    const inputs = new StepInputs(io({ inputIdsType: 'int32', attentionMaskType: 'int32', positionIdsType: 'int32' }), []);
    const prefill = inputs.feeds([5, 6, 7], 0);
    expect(prefill['input_ids']).toEqual({ type: 'int32', dims: [1, 3], data: Int32Array.of(5, 6, 7) });
    expect(prefill['attention_mask']).toEqual({ type: 'int32', dims: [1, 3], data: Int32Array.of(1, 1, 1) });
    const decode = inputs.feeds([8], 3);
    expect(decode['position_ids']).toEqual({ type: 'int32', dims: [1, 1], data: Int32Array.of(3) });
    expect(decode['attention_mask']!.data).toEqual(Int32Array.of(1, 1, 1, 1));
    // a decode step reuses its one-token arrays
    expect(inputs.feeds([9], 4)['input_ids']!.data).toBe(decode['input_ids']!.data);
  });

  it('mixes types as declared (int64 ids, int32 mask)', () => {
    const feeds = new StepInputs(io({ attentionMaskType: 'int32' }), []).feeds([1, 2], 0);
    expect(feeds['input_ids']!.type).toBe('int64');
    expect(feeds['attention_mask']!.type).toBe('int32');
  });

  it('feeds use_cache_branch false at the prefill (empty past), true after', () => {
    const inputs = new StepInputs(io({ useCacheBranch: 'use_cache_branch' }), []);
    expect(inputs.feeds([1, 2], 0)['use_cache_branch']).toEqual({ type: 'bool', dims: [1], data: Uint8Array.of(0) });
    expect(inputs.feeds([3], 2)['use_cache_branch']).toEqual({ type: 'bool', dims: [1], data: Uint8Array.of(1) });
    expect(new StepInputs(io({}), []).feeds([1], 0)['use_cache_branch']).toBeUndefined();
  });
});
