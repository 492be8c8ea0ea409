import { describe, expect, it } from 'vitest';
import { planWindowChunks } from './chunk-plan.js';
import { flushSchedule } from '../cache/flush-schedule.js';
import { defaultWindowSettings } from './eval-settings.js';
import { planWindows, scoredRows } from './windows.js';

describe('planWindows: llama.cpp\'s chunks', () => {
  const text = [1, ...Array.from({ length: 1300 }, (_, i) => 3 + (i % 50))];

  it('cuts non-overlapping windows of context tokens, each starting with BOS, as many as fit', () => {
    const windows = planWindows(text, 1, defaultWindowSettings(512));
    expect(windows.map((w) => w.start)).toEqual([0, 512]);
    expect(windows.every((w) => w.tokens.length === 512 && w.tokens[0] === 1 && w.prefill === 256)).toBe(true);
    expect(windows[1]!.tokens.slice(1)).toEqual(text.slice(513, 1024));
    expect(scoredRows(windows[0]!)).toBe(255);
  });

  it('strides and caps the count; keeps the first token when the tokenizer adds no BOS', () => {
    const windows = planWindows(text.slice(1), 1, { context: 100, stride: 50, prefill: 10, maxWindows: 3 });
    expect(windows.map((w) => w.start)).toEqual([0, 50, 100]);
    expect(windows[0]!.tokens[0]).toBe(3);
  });

  it('refuses a text shorter than a window and a prefill that leaves nothing to score', () => {
    expect(() => planWindows(text.slice(0, 100), 1, defaultWindowSettings(512))).toThrow(/encodes to 100 tokens, fewer than one window of --context 512/);
    expect(() => planWindows(text, 1, { context: 64, stride: 64, prefill: 63, maxWindows: null })).toThrow(/leaves nothing to score/);
  });
});

describe('planWindowChunks: runs that end at the flush steps', () => {
  it('dynamic: one full-sequence pass reading the rows after the prefill', () => {
    expect(planWindowChunks(512, 256, 'dynamic', 128)).toEqual([{ start: 0, end: 512, rows: 256, updates: [512] }]);
  });

  it.each([[128], [32], [5], [1], [0]])('quantized, residual %i: runs end exactly where one-token steps flush', (residual) => {
    const chunks = planWindowChunks(300, 100, 'quantized', residual);
    expect(chunks[0]).toEqual({ start: 0, end: 100, rows: 1, updates: [100] });
    const flushSteps = flushSchedule(100, residual, 200, 1).flushSteps;
    // Each full run ends on a flush step (step s feeds token 100 + s − 1); partial runs flush nowhere.
    const ends = chunks.slice(1).filter((c) => c.updates.length === 2).map((c) => c.end - 100);
    expect(ends).toEqual(flushSteps);
    expect(chunks.slice(1).every((c) => c.rows === c.end - c.start)).toBe(true);
    expect(chunks.at(-1)!.end).toBe(300);
  });

  it('token-by-token: the prefill, then one token per run', () => {
    const chunks = planWindowChunks(10, 4, 'quantized', 128, 'token-by-token');
    expect(chunks.map((c) => [c.start, c.end, c.updates])).toEqual([[0, 4, [4]], [4, 5, [1]], [5, 6, [1]], [6, 7, [1]], [7, 8, [1]], [8, 9, [1]], [9, 10, [1]]]);
  });
});
