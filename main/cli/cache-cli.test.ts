import { describe, expect, it } from 'vitest';
import { cli, useCliSandbox } from './test-support/cli-sandbox.js';
import { readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { hasShared } from '../../app/node/golden.js';
import { storiesDir } from '../../app/node/test-support/stories.js';

const sandbox = useCliSandbox('cache-cli', ['KVSCOPE_CACHE_MAX_BYTES']);

describe.skipIf(!hasShared())('kvscope cache on the references kvscope eval writes under KVSCOPE_CACHE_DIR', () => {
  it('eval prints the reference it stored; cache list shows it; prune removes it by size, not by age', async () => {
    const evaluated = await cli(['eval', '--model', storiesDir(), '--windows', '2', '--dequantize', 'graph']);
    expect(evaluated.err).toBe('');
    expect(evaluated.code).toBe(0);
    // 2 windows × 255 scored rows × 64 hidden floats × 4 bytes (127.5 KiB; the compact form), plus headers.
    expect(evaluated.out).toMatch(/reference: 2 windows computed and stored \(12\d KiB on disk, key [0-9a-f]{12}\)/);
    const references = join(sandbox.dir(), 'cache', 'eval-references');
    expect(readdirSync(references)).toHaveLength(1);
    const again = await cli(['eval', '--model', storiesDir(), '--windows', '1', '--dequantize', 'graph']);
    expect(again.out).toMatch(/reference: read from the cache \(12\d KiB on disk/);

    const listed = await cli(['cache', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(`kvscope cache: ${join(sandbox.dir(), 'cache')}`);
    expect(listed.out).toMatch(/eval-references\/ {2}1 entry, 12\d KiB/);
    expect(listed.out).toMatch(/reference of stories260k\/onnx\/model\.onnx, text kvscope:default, 2 windows of 512 \(stride 512, prefill 256\), chunked, cpu/);
    expect(listed.out).toMatch(/in-graph\/ {2}1 entry/);
    const json = JSON.parse((await cli(['cache', 'list', '--json'])).out) as { folders: { name: string; entries: { bytes: number; linkedBytes: number }[] }[] };
    expect(json.folders.map((folder) => folder.name)).toEqual(['eval-references', 'reference-graphs', 'in-graph', 'models']);
    expect(json.folders[0]!.entries[0]!.bytes).toBeGreaterThan(2 * 255 * 64 * 4);
    // The compact reference's graphs (the source with its hidden state as an output, and its LM head).
    expect(json.folders[1]!.entries).toHaveLength(1);

    // Used a minute ago: not older than 30 days, so --older-than keeps it.
    expect((await cli(['cache', 'prune', '--older-than', '30d'])).out).toMatch(/removed 0 eval references \(0 B\); 12\d KiB left/);
    const dry = await cli(['cache', 'prune', '--max-size', '0', '--dry-run']);
    expect(dry.out).toMatch(/would remove 1 eval reference/);
    expect(readdirSync(references)).toHaveLength(1);
    // Last used 40 days ago: --older-than 30d removes it.
    const [key] = readdirSync(references);
    const past = new Date(Date.now() - 40 * 86_400_000);
    utimesSync(join(references, key!, 'reference.json'), past, past);
    const pruned = await cli(['cache', 'prune', '--older-than', '30d']);
    expect(pruned.out).toMatch(/removed 1 eval reference \(12\d KiB\); 0 B left/);
    expect(readdirSync(references)).toEqual([]);
  });
});

describe('kvscope cache: bad input in user words', () => {
  it.each([
    [['cache', 'prune'], /prune needs --older-than AGE .* and\/or --max-size SIZE/],
    [['cache', 'prune', '--older-than', '3 fortnights'], /--older-than "3 fortnights" is not an age/],
    [['cache', 'prune', '--max-size', 'big'], /--max-size "big" is not a size/],
    [['cache', 'tidy'], /unknown action "tidy"\. Use kvscope cache list or kvscope cache prune/],
  ])('%j', async (args, message) => {
    const { code, err } = await cli(args);
    expect(code).toBe(1);
    expect(err).toMatch(message);
    expect(err).not.toMatch(/internal error/);
  });

  it('a bad KVSCOPE_CACHE_MAX_BYTES is named with what to set', async () => {
    process.env['KVSCOPE_CACHE_MAX_BYTES'] = 'plenty';
    try {
      const { code, err } = await cli(['cache', 'list']);
      expect(code).toBe(1);
      expect(err).toMatch(/KVSCOPE_CACHE_MAX_BYTES="plenty" is not a size: set it to bytes or a number with K, M, G or T/);
    } finally {
      delete process.env['KVSCOPE_CACHE_MAX_BYTES'];
    }
  });

  it('--help names the cache folder, for cache, eval and sweep', async () => {
    for (const command of ['cache', 'eval', 'sweep']) {
      const { out } = await cli([command, '--help']);
      expect(out).toContain('$KVSCOPE_CACHE_DIR');
      expect(out).toContain('~/.cache/kvscope');
    }
  });
});
