import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../app/cli/io.js';
import type { RunJson } from '../../app/cli/run-command.js';
import { sharedDir } from '../../app/node/golden.js';
import { writeFixtureFolder } from '../../app/node/model/test-support/layout-fixtures.js';
import { liveGenerationWorkers } from '../../app/node/worker/worker-client.js';
import { nodeCliIo } from './node-io.js';
import { runCli } from './run-cli.js';

/** The CLI on the layouts of issue 11: the preflight reads the graph's I/O, runs take graphs and prompt ids. */
const TINY = join(sharedDir(), 'models', 'ort-genai-tiny');

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = { ...nodeCliIo(), stdout: (t) => void (out += t), stderr: (t) => void (err += t) };
  const code = await runCli(args, io);
  return { code, out, err };
}

interface PreflightJson {
  ok: boolean;
  layerTypes: string[];
  diagnostics: { code: string; severity: string; message: string }[];
  layout: { kind: string; label: string; configFile: string; precision: string; naming: string; kvPacking: string } | null;
}

let root: string;
beforeAll(() => { root = mkdtempSync(join(tmpdir(), 'kvscope-layout-cli-')); });
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(async () => {
  for (let waited = 0; liveGenerationWorkers() > 0 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
  expect(liveGenerationWorkers()).toBe(0);
});

describe('kvscope preflight --config <folder> reads the layout and the graph\'s I/O', () => {
  it('the shared LFM2 export: genai_config.json\'s layer types get transformers\' verdict (exit 2), the layout is named', async () => {
    const { code, out } = await cli(['preflight', '--config', join(TINY, 'lfm2-hybrid-stub'), '--json']);
    expect(code).toBe(2);
    const json = JSON.parse(out) as PreflightJson;
    expect(json.layerTypes).toEqual(['conv', 'full_attention', 'conv', 'full_attention']);
    expect(json.diagnostics[0]!.message).toContain("We found the following invalid layer types: {'conv'}");
    expect(json.layout).toMatchObject({ kind: 'ort-genai', configFile: 'genai_config.json', precision: 'fp32 weights · fp32 KV · fp32 logits' });
    const allowed = await cli(['preflight', '--config', join(TINY, 'lfm2-hybrid-stub'), '--layer-policy', 'full-attention-only', '--group-size', '8']);
    expect(allowed.code).toBe(0);
    expect(allowed.out).toMatch(/layout: ONNX Runtime GenAI folder \(genai_config\.json, decoder\.onnx\)/);
  });

  it('a genai_config.json given directly is read as the model config', async () => {
    const { code, out } = await cli(['preflight', '--config', join(TINY, 'llama-fp16', 'genai_config.json'), '--json']);
    expect(code).toBe(0);
    expect((JSON.parse(out) as PreflightJson).layerTypes).toEqual(['full_attention', 'full_attention']);
  });

  it('a graph kvscope cannot feed is refused by the preflight, before any run (exit 2)', async () => {
    const dir = await writeFixtureFolder(join(root, 'uint8-kv'), { graphs: [{ path: 'onnx/model.onnx', options: { kvType: 'uint8' } }] });
    const { code, out } = await cli(['preflight', '--config', dir, '--group-size', '8']);
    expect(code).toBe(2);
    expect(out).toContain('REFUSED: a quantized-cache run cannot start.');
    expect(out).toContain('ERROR [io-kv-prequantized]');
    const run = await cli(['run', '--model', dir, '--prompt-ids', '1,2', '--cache', 'dynamic']);
    expect(run.code).toBe(2);
    expect(run.err).toMatch(/keeps a pre-quantized KV cache/);
  });

  it('int32 inputs and a combined past are no longer refused (the gpt2 export, exit 0)', async () => {
    const { code, out } = await cli(['preflight', '--config', join(TINY, 'gpt2-combined-past'), '--group-size', '8', '--json']);
    expect(code).toBe(0);
    expect((JSON.parse(out) as PreflightJson).layout).toMatchObject({ kvPacking: 'combined' });
  });
});

describe('kvscope run: --model graph.onnx, --prompt-ids', () => {
  it('runs a graph given by its path (its genai_config.json beside it), and a folder without a tokenizer from prompt ids', async () => {
    const graph = await cli(['run', '--model', join(TINY, 'gpt2-combined-past', 'past.onnx'), '--prompt-ids', '98,5,17', '--cache', 'dynamic', '--max-new-tokens', '4', '--json']);
    expect(graph.code).toBe(0);
    expect((JSON.parse(graph.out) as RunJson).promptTokens).toEqual([98, 5, 17]);

    const ids = await cli(['run', '--model', join(TINY, 'lfm2-hybrid-stub'), '--prompt-ids', '5,6,7', '--cache', 'dynamic', '--max-new-tokens', '5', '--json']);
    expect(ids.code).toBe(0);
    const json = JSON.parse(ids.out) as RunJson;
    expect(json.text).toBe(json.tokens.join(' '));
  });

  it('asks for prompt ids where there is no tokenizer, and refuses malformed ones (exit 1)', async () => {
    const noTokenizer = await cli(['run', '--model', join(TINY, 'lfm2-hybrid-stub'), '--cache', 'dynamic', '--max-new-tokens', '2']);
    expect(noTokenizer.code).toBe(1);
    expect(noTokenizer.err).toMatch(/has no tokenizer\.json[\s\S]*--prompt-ids/);
    const malformed = await cli(['run', '--model', join(TINY, 'lfm2-hybrid-stub'), '--prompt-ids', '5,x']);
    expect(malformed.code).toBe(1);
    expect(malformed.err).toMatch(/--prompt-ids must be token ids/);
    const both = await cli(['run', '--model', join(TINY, 'lfm2-hybrid-stub'), '--prompt-ids', '5', '--prompt', 'hi']);
    expect(both.err).toMatch(/Use one or the other/);
    const outside = await cli(['run', '--model', join(TINY, 'lfm2-hybrid-stub'), '--prompt-ids', '5,1000', '--cache', 'dynamic']);
    expect(outside.code).toBe(1);
    expect(outside.err).toMatch(/prompt ids 1000 are not token ids of this model \(its logits have 1000 entries\)/);
  });
});
