import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { hqqHelperWanted } from './hqq-helper-thread.js';

describe('hqqHelperWanted', () => {
  it('follows the core count unless KVSCOPE_HQQ_THREADS=1 keeps the optimizer on one thread', () => {
    expect(hqqHelperWanted({})).toBe(availableParallelism() >= 2);
    expect(hqqHelperWanted({ KVSCOPE_HQQ_THREADS: '1' })).toBe(false);
  });
});
