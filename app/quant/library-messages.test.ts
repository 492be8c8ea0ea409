import { describe, expect, it } from 'vitest';
import { axisMessage, hqqGroupSizeMessage, nbitsMessage, quantoGroupSizeMessage } from './library-messages.js';

describe('the backends\' messages, verbatim (spec §1.2, §3.1, §3.2)', () => {
  it('nbits and axes, as each backend spells itself', () => {
    expect(nbitsMessage('quanto', [2, 4], 3)).toBe('`nbits` for `quanto` backend has to be one of [`2`, `4`] but got 3');
    expect(nbitsMessage('HQQ', [1, 2, 3, 4, 8], 5)).toBe('`nbits` for `HQQ` backend has to be one of [`1`, `2`, `3`, `4`, `8`] but got 5');
    expect(axisMessage('quanto', 'axis_key', [0, -1], 1)).toBe('`axis_key` for `quanto` backend has to be one of [`0`, `-1`] but got 1');
    expect(axisMessage('quanto', 'axis_value', [0, -1], 2)).toBe('`axis_value` for `quanto` backend has to be one of [`0`, `-1`] but got 2');
    expect(axisMessage('HQQ', 'axis_key', [0, 1], -1)).toBe('`axis_key` for `HQQ` backend has to be one of [`0`, `1`] but got -1');
    expect(axisMessage('HQQ', 'axis_value', [0, 1], 2)).toBe('`axis_value` for `HQQ` backend has to be one of [`0`, `1`] but got 2');
  });

  it('the backends’ group-size failures', () => {
    expect(quantoGroupSizeMessage(64, 148)).toBe('Group size (64) must be a divisor of (148)');
    expect(hqqGroupSizeMessage([1, 4, 37, 8], 64)).toBe(
      'group_size should be divisble by the total tensor dimensions. shape: torch.Size([1, 4, 37, 8]), group_size: 64',
    );
  });
});
