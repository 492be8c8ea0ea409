import { describe, expect, it } from 'vitest';
import { intraOpThreadsFor, SINGLE_THREAD_MAX_HIDDEN_SIZE } from './intra-op-threads.js';

describe('intraOpThreadsFor', () => {
  it('runs tiny CPU graphs on one thread and leaves the rest to ORT', () => {
    expect(intraOpThreadsFor('cpu', 64)).toBe(1);
    expect(intraOpThreadsFor('cpu', SINGLE_THREAD_MAX_HIDDEN_SIZE)).toBe(1);
    expect(intraOpThreadsFor('cpu', SINGLE_THREAD_MAX_HIDDEN_SIZE + 1)).toBeUndefined();
    expect(intraOpThreadsFor('cpu', 512)).toBeUndefined();
    expect(intraOpThreadsFor('cpu', null)).toBeUndefined();
    expect(intraOpThreadsFor('webgpu', 64)).toBeUndefined();
  });
});
