import { afterEach, expect } from 'vitest';

interface Tracked {
  readonly disposed: boolean;
  dispose(): void;
}

/**
 * Leak check in the spirit of VS Code's `ensureNoDisposablesAreLeakedInTestSuite` (STYLE.md §8):
 * every cache or layer a test creates goes through `track`, and the test fails if it was not disposed.
 */
export function trackDisposables(): <T extends Tracked>(item: T) => T {
  const tracked: Tracked[] = [];
  afterEach(() => {
    const leaked = tracked.filter((item) => !item.disposed);
    for (const item of leaked) item.dispose();
    tracked.length = 0;
    expect(leaked.length, 'caches or layers left undisposed by the test').toBe(0);
  });
  return (item) => {
    tracked.push(item);
    return item;
  };
}
