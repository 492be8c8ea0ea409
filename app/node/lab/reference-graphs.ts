import { readFileSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { decodeModel, encodeModel } from '../../onnx/onnx-model.js';
import { findLmHead, lmHeadModel, withHiddenOutput } from '../../onnx/rewrite/lm-head-split.js';
import { sha256File, sha256Text } from '../model/file-digest.js';
import { linkExternalData } from '../onnx/in-graph-model.js';
import { publishFolder } from '../synthetic/publish-folder.js';
import { kvscopeCacheRoot } from './lab-cache-dir.js';

/** Bumped when the cut or the files change. */
const REFERENCE_GRAPHS_VERSION = 1;
const MODEL_FILE = 'model.onnx';
const HEAD_FILE = 'lm-head.onnx';
const MANIFEST_FILE = 'reference-graphs.json';

/** The source graph with its hidden state as an added output, and its LM head alone, on disk. */
export interface ReferenceGraphs {
  /** the source graph plus the output `hidden`: the same logits bit for bit (lm-head-split.ort.test.ts) */
  readonly modelPath: string;
  /** the LM head: input `hidden`, output the logits */
  readonly headPath: string;
  readonly hidden: string;
}

interface Manifest {
  readonly key: string;
  readonly hidden: string;
  readonly modelBytes: number;
  readonly headBytes: number;
}

/**
 * The graphs of a compact reference (docs/eval-record.md "The compact form, exact"), built once per source
 * graph and cached by content beside the in-graph rewrites: `<root>/reference-graphs/<key>/`, external
 * data hard-linked as the rewrite cache links it. Returns the reason instead when the head cannot be
 * cut (the reference then keeps float32 logits).
 */
export async function ensureReferenceGraphs(sourcePath: string, logitsName: string, cacheDir = join(kvscopeCacheRoot(), 'reference-graphs')): Promise<ReferenceGraphs | { readonly reason: string }> {
  const key = sha256Text(JSON.stringify({ version: REFERENCE_GRAPHS_VERSION, source: await sha256File(sourcePath), logitsName }));
  const folder = join(cacheDir, key.slice(0, 32));
  const cached = await readValid(folder, key);
  if (cached !== null) return { modelPath: join(folder, MODEL_FILE), headPath: join(folder, HEAD_FILE), hidden: cached.hidden };
  const source = decodeModel(readFileSync(sourcePath), sourcePath);
  const head = findLmHead(source, logitsName);
  if ('reason' in head) return head;
  await publishFolder(folder, async (temp) => {
    const model = withHiddenOutput(source, head);
    const modelBytes = encodeModel(model);
    const headBytes = encodeModel(lmHeadModel(source, head));
    await writeFile(join(temp, MODEL_FILE), modelBytes);
    await writeFile(join(temp, HEAD_FILE), headBytes);
    await linkExternalData(model, dirname(resolve(sourcePath)), temp);
    const manifest: Manifest = { key, hidden: head.hidden, modelBytes: modelBytes.byteLength, headBytes: headBytes.byteLength };
    await writeFile(join(temp, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  }, async (dir) => (await readValid(dir, key)) !== null);
  return { modelPath: join(folder, MODEL_FILE), headPath: join(folder, HEAD_FILE), hidden: head.hidden };
}

async function readValid(folder: string, key: string): Promise<Manifest | null> {
  try {
    const manifest = JSON.parse(await readFile(join(folder, MANIFEST_FILE), 'utf8')) as Manifest;
    if (manifest.key !== key) return null;
    const sizes = await Promise.all([stat(join(folder, MODEL_FILE)), stat(join(folder, HEAD_FILE))]);
    return sizes[0].size === manifest.modelBytes && sizes[1].size === manifest.headBytes ? manifest : null;
  } catch {
    return null;
  }
}
