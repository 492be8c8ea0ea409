import { describe, expect, it } from 'vitest';
import { cli, useCliSandbox } from './test-support/cli-sandbox.js';
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
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
    // One derived-graph cache: the compact reference's graph and the in-graph rewrite, each named with its source.
    expect(listed.out).toMatch(/derived-graphs\/ {2}2 entries/);
    expect(listed.out).toMatch(/compact-reference graph \(hidden-state outputs, LM head input\) of \S+stories260k\/onnx\/model\.onnx/);
    expect(listed.out).toMatch(/in-graph dequantization rewrite of \S+stories260k\/onnx\/model\.onnx/);
    const json = JSON.parse((await cli(['cache', 'list', '--json'])).out) as { folders: { name: string; entries: { bytes: number; linkedBytes: number }[] }[] };
    expect(json.folders.map((folder) => folder.name)).toEqual(['eval-references', 'derived-graphs', 'models']);
    expect(json.folders[0]!.entries[0]!.bytes).toBeGreaterThan(2 * 255 * 64 * 4);
    expect(json.folders[1]!.entries).toHaveLength(2);

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
    // The derived graphs, used a minute ago, stay; --max-size 0 removes them, and the next eval derives them again.
    expect(pruned.out).toMatch(/removed 0 derived graphs \(0 B\); [\d.]+ KiB left/);
    const derived = join(sandbox.dir(), 'cache', 'derived-graphs');
    expect((await cli(['cache', 'prune', '--max-size', '0'])).out).toMatch(/removed 2 derived graphs/);
    expect(readdirSync(derived).filter((name) => !name.startsWith('.'))).toEqual([]);
    const rebuilt = await cli(['eval', '--model', storiesDir(), '--windows', '1', '--dequantize', 'graph']);
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.err).toBe('');
    expect(readdirSync(derived).filter((name) => !name.startsWith('.'))).toHaveLength(2);
  });

  it('an older kvscope\'s derived-graph folders are listed as stale and removed whole by any prune, and break nothing', async () => {
    const root = join(sandbox.dir(), 'cache');
    for (const [folder, manifest] of [['in-graph', 'in-graph.json'], ['reference-graphs', 'reference-graphs.json']] as const) {
      mkdirSync(join(root, folder, '0123456789abcdef0123456789abcdef'), { recursive: true });
      writeFileSync(join(root, folder, '0123456789abcdef0123456789abcdef', manifest), '{"key":"old"}');
      writeFileSync(join(root, folder, '0123456789abcdef0123456789abcdef', 'model.onnx'), 'not a graph');
    }
    const listed = await cli(['cache', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.out).toMatch(/in-graph\/ {2}1 entry, \d+ B {2}\[from an older kvscope, no longer read: kvscope cache prune removes it\]/);
    expect(listed.out).toMatch(/reference-graphs\/ {2}1 entry/);
    const evaluated = await cli(['eval', '--model', storiesDir(), '--windows', '1', '--dequantize', 'graph']);
    expect(evaluated.code).toBe(0);
    expect(evaluated.err).toBe('');
    const pruned = await cli(['cache', 'prune', '--older-than', '3650d']);
    expect(pruned.out).toMatch(/removed 1 entry of in-graph\/ \(from an older kvscope, no longer read\)/);
    expect(existsSync(join(root, 'in-graph'))).toBe(false);
    expect(existsSync(join(root, 'reference-graphs'))).toBe(false);
    expect(readdirSync(join(root, 'derived-graphs')).filter((name) => !name.startsWith('.'))).toHaveLength(2);
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
