import { describe, expect, it } from 'vitest';
import { sideChoiceOf, sideChoiceValue, sideLabel } from './side-choice.js';

describe('a side\'s choice as a select value', () => {
  it('round-trips the default, bits, full and a format whose name holds a colon; keep is no choice', () => {
    for (const choice of ['default', { bits: 4 }, { bits: 'full' }, { format: 'llama.cpp:q8_0+rot' }] as const) {
      expect(sideChoiceOf(sideChoiceValue(choice))).toEqual(choice);
    }
    expect(sideChoiceOf('keep')).toBeNull();
    expect(sideLabel({ bits: 2 })).toBe('2-bit');
    expect(sideLabel({ format: 'nvfp4' })).toBe('nvfp4');
  });
});
