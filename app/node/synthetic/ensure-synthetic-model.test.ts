import { existsSync, statSync } from 'node:fs';
import { cp, mkdtemp, open, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
