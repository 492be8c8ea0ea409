import { createHash } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { cp, mkdtemp, open, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildSyntheticModelJsonFiles, SYNTHETIC_ONNX_PATH } from '../../synthetic/synthetic-model.js';
import { SYNTHETIC_FORMAT_VERSION } from '../../synthetic/synthetic-spec.js';
import { ensureSyntheticModel } from './ensure-synthetic-model.js';
import { sha256Text } from '../model/file-digest.js';
import { checkModelFolder, contentHash, MANIFEST_NAME, type FolderManifest } from './folder-manifest.js';
import { defaultSyntheticCacheDir, syntheticModelFolder } from './synthetic-cache-dir.js';
import { testCacheDir } from './test-support/synthetic-session.js';

let cacheDir: string;
let folder: string;
beforeAll(async () => {
  cacheDir = await mkdtemp(join(tmpdir(), 'kvscope-ensure-'));
  // A copy of the shared test model (built once for all test files) is ours to damage
  await cp(await ensureSyntheticModel('synthetic', { cacheDir: testCacheDir() }), syntheticModelFolder('synthetic', cacheDir), { recursive: true });
  // two concurrent callers share one check
  const [first, second] = await Promise.all([ensureSyntheticModel('synthetic', { cacheDir }), ensureSyntheticModel('synthetic', { cacheDir })]);
  expect(second).toBe(first);
  folder = first;
});
afterAll(async () => {
  await rm(cacheDir, { recursive: true, force: true });
});

const expected = buildSyntheticModelJsonFiles('synthetic');
const allPaths = [...expected.files.map((file) => file.path), SYNTHETIC_ONNX_PATH];
const check = async (): Promise<string> => {
  const result = await checkModelFolder(folder, expected, allPaths);
  return result.ok ? 'ok' : result.reason;
};

describe('ensureSyntheticModel', () => {
  it('returns a Hugging Face folder named by kind and format version', () => {
    expect(folder).toBe(join(cacheDir, `synthetic-v${SYNTHETIC_FORMAT_VERSION}`));
    for (const path of [...allPaths, MANIFEST_NAME]) expect(existsSync(join(folder, path)), path).toBe(true);
  });

  it('reuses a verified folder without rewriting it', async () => {
    const before = statSync(join(folder, SYNTHETIC_ONNX_PATH)).mtimeMs;
    expect(await ensureSyntheticModel('synthetic', { cacheDir })).toBe(folder);
    expect(statSync(join(folder, SYNTHETIC_ONNX_PATH)).mtimeMs).toBe(before);
  });

  it('notices a damaged, stale or half-written folder by its content hashes', async () => {
    // one flipped bit in the middle of the weights, same size
    const onnx = await open(join(folder, SYNTHETIC_ONNX_PATH), 'r+');
    const middle = (await onnx.stat()).size >> 1;
    const flip = async (): Promise<void> => {
      const byte = Buffer.alloc(1);
      await onnx.read(byte, 0, 1, middle);
      byte[0] ^= 1;
      await onnx.write(byte, 0, 1, middle);
    };
    try {
      await flip();
      expect(await check()).toMatch(/onnx\/model\.onnx does not match its sha256/);
      await flip();
    } finally {
      await onnx.close();
    }

    // a consistent folder from an older generator: files and manifest agree, the current generator differs
    const configPath = join(folder, 'config.json');
    const config = await readFile(configPath, 'utf8');
    const manifest = await readFile(join(folder, MANIFEST_NAME));
    const olderConfig = config.replace('"seed": ', '"seed": 1');
    const files = { ...(JSON.parse(manifest.toString('utf8')) as FolderManifest).files };
    files['config.json'] = { bytes: Buffer.byteLength(olderConfig), sha256: sha256Text(olderConfig) };
    const olderManifest: FolderManifest = { kind: 'synthetic', format_version: SYNTHETIC_FORMAT_VERSION, content_sha256: contentHash(files), files };
    await writeFile(configPath, olderConfig);
    await writeFile(join(folder, MANIFEST_NAME), JSON.stringify(olderManifest));
    expect(await check()).toMatch(/config\.json is not what this kvscope generates/);
    await writeFile(configPath, config);
    await writeFile(join(folder, MANIFEST_NAME), manifest);

    await rm(join(folder, MANIFEST_NAME));
    expect(await check()).toMatch(/no readable kvscope-synthetic\.json/);
    await writeFile(join(folder, MANIFEST_NAME), manifest);
    expect(await check()).toBe('ok');
  });

  it('rebuilds a folder whose files were cut short', async () => {
    await truncate(join(folder, SYNTHETIC_ONNX_PATH), 1000);
    expect(await check()).toMatch(/wrong size/);
    expect(await ensureSyntheticModel('synthetic', { cacheDir })).toBe(folder);
    expect(await check()).toBe('ok');
  });

  it('a damaged folder (bytes flipped in the weights or the manifest, sizes kept) is discarded and rebuilt as fresh, with one line on stderr', async () => {
    const manifestPath = join(folder, MANIFEST_NAME);
    const fresh = JSON.parse(await readFile(manifestPath, 'utf8')) as FolderManifest;
    const flipAt = async (path: string, offset: number): Promise<void> => {
      const handle = await open(path, 'r+');
      try {
        const before = (await handle.stat()).size;
        const bytes = Buffer.alloc(4);
        await handle.read(bytes, 0, 4, offset);
        for (let i = 0; i < 4; i++) bytes[i]! ^= 0x5a;
        await handle.write(bytes, 0, 4, offset);
        expect((await handle.stat()).size).toBe(before);
      } finally {
        await handle.close();
      }
    };
    const damages: [string, () => Promise<void>, RegExp][] = [
      ['weights', () => flipAt(join(folder, SYNTHETIC_ONNX_PATH), statSync(join(folder, SYNTHETIC_ONNX_PATH)).size >> 1), /onnx\/model\.onnx does not match its sha256/],
      ['manifest', async () => flipAt(manifestPath, (await readFile(manifestPath, 'utf8')).indexOf('"sha256"') + 12), /content_sha256 does not match|does not match its sha256|not what this kvscope generates/],
    ];
    for (const [what, damage, reason] of damages) {
      await damage();
      const spy = vi.spyOn(process.stderr, 'write');
      try {
        expect(await ensureSyntheticModel('synthetic', { cacheDir })).toBe(folder);
        const lines = spy.mock.calls.map((call) => String(call[0])).join('');
        expect(lines, what).toMatch(/^kvscope: the cached synthetic model in \S+ failed its check \(.+\); discarded and rebuilt\.\n$/);
        expect(lines, what).toMatch(reason);
      } finally {
        spy.mockRestore();
      }
      // the rebuilt folder is the fresh one, byte for byte (the generator is deterministic), so every run on it is too
      expect(JSON.parse(await readFile(manifestPath, 'utf8')), what).toEqual(fresh);
      expect(await check()).toBe('ok');
    }
  }, 60_000);

  it('verifying reads every file once (sha256, measured in ms per GB) and agrees with the manifest', async () => {
    const manifest = JSON.parse(await readFile(join(folder, MANIFEST_NAME), 'utf8')) as FolderManifest;
    let bytes = 0;
    const start = performance.now();
    for (const path of allPaths) {
      // hashed afresh here: sha256File memoizes per path within a process, a new process reads it all
      const hash = createHash('sha256');
      for await (const chunk of createReadStream(join(folder, ...path.split('/')), { highWaterMark: 1 << 22 })) hash.update(chunk as Buffer);
      expect(hash.digest('hex'), path).toBe(manifest.files[path]!.sha256);
      bytes += manifest.files[path]!.bytes;
    }
    const ms = performance.now() - start;
    console.info(`synthetic folder check: ${(bytes / 1e6).toFixed(0)} MB in ${ms.toFixed(0)} ms = ${(ms / (bytes / 1e9)).toFixed(0)} ms per GB`);
  });

  it('refuses an unknown kind with the list of known ones', async () => {
    await expect(ensureSyntheticModel('tiny' as 'synthetic', { cacheDir })).rejects.toThrow(/unknown synthetic model "tiny"; expected one of synthetic, synthetic-hybrid/);
  });

  it('defaults to $KVSCOPE_CACHE_DIR/models', () => {
    const saved = process.env['KVSCOPE_CACHE_DIR'];
    try {
      process.env['KVSCOPE_CACHE_DIR'] = '/somewhere/kvscope';
      expect(defaultSyntheticCacheDir()).toBe(join('/somewhere/kvscope', 'models'));
      delete process.env['KVSCOPE_CACHE_DIR'];
      expect(defaultSyntheticCacheDir()).toMatch(/[/\\]\.cache[/\\]kvscope[/\\]models$/);
    } finally {
      if (saved === undefined) delete process.env['KVSCOPE_CACHE_DIR'];
      else process.env['KVSCOPE_CACHE_DIR'] = saved;
    }
  });
});
