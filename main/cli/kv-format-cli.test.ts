import { describe, expect, it } from 'vitest';
import { cli, useCliSandbox } from './test-support/cli-sandbox.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasShared } from '../../app/node/golden.js';
import { storiesDir } from '../../app/node/test-support/stories.js';
import { parseEvalRecord } from '../../app/lab/eval-record.js';
import { parseRunRecord } from '../../app/record/parse-run-record.js';

/**
 * `--kv-format` (issue 27): a serving runtime's write-once KV cache in `run` and `eval`, end to end
 * through the worker threads. stories260k's head_dim is 8, which llama.cpp refuses; the llama.cpp
 * formats run on the synthetic models (head_dim 64, and 128 for synthetic-8b-kv).
 */
const sandbox = useCliSandbox('kv-format-cli');

interface RunJsonShape {
  ok: boolean;
  tokens: number[];
  promptTokens: number[];
  dequantize: string;
  flushes: (number | null)[];
  kvBytes: { codeBytes: number; metadataBytes: number; fullPrecisionBytes: number; totalBytes: number };
  extensions: { id: string; detail: string }[];
  reference: { meanKl: number; top1Agreement: number };
}

const PROMPT_IDS = ['--prompt-ids', '1,15,27,33,48,52,61,70'];

describe.skipIf(!hasShared())('kvscope run --kv-format', () => {
  it('refuses llama.cpp\'s formats on stories260k (head_dim 8) before the run, with llama.cpp\'s reason', async () => {
    const { code, err } = await cli(['run', '--model', storiesDir(), '--kv-format', 'llama.cpp:q8_0', '--prompt', 'Once upon', '--max-new-tokens', '4']);
    expect(code).toBe(2);
    expect(err).toContain('llama_init_from_model: K cache type q8_0 with block size 32 does not divide n_embd_head_k=8');
    expect(err).toContain('llama_init_from_model: V cache type q8_0 with block size 32 does not divide n_embd_head_v=8');
    const evalRefused = await cli(['eval', '--model', storiesDir(), '--kv-format', 'llama.cpp:q4_0', '--windows', '1', '--json']);
    expect(evalRefused.code).toBe(2);
    expect(evalRefused.out + evalRefused.err).toContain('K cache type q4_0 with block size 32 does not divide n_embd_head_k=8');
  });

  it('runs vLLM FP8 on stories260k on the graph path (its bytes dequantized in ONNX), stores one byte per value, and records the format', async () => {
    const out = join(sandbox.dir(), 'fp8.json');
    const { code, out: stdout, err } = await cli(['run', '--model', storiesDir(), '--kv-format', 'vllm:fp8_e4m3', '--prompt', 'Once upon a time',
      '--max-new-tokens', '6', '--reference', '--json', '--out', out]);
    expect(err).toBe('');
    expect(code).toBe(0);
    const json = JSON.parse(stdout) as RunJsonShape;
    expect(json.dequantize).toBe('graph');
    expect(json.extensions.map((e) => e.id)).toEqual(['kv-format']);
    expect(json.flushes).toEqual([0, 0, 0, 0, 0]);
    // Every token the cache holds (the last one generated is never fed back), 5 layers × 4 KV heads × (8 + 8) bytes,
    // plus vLLM's fp32 k_scale and v_scale per layer.
    const tokens = json.promptTokens.length + json.tokens.length - 1;
    expect(json.kvBytes).toMatchObject({ codeBytes: tokens * 5 * 4 * 16, metadataBytes: 5 * 8, fullPrecisionBytes: 0 });
    expect(json.reference.meanKl).toBeGreaterThan(0);
    expect(json.reference.meanKl).toBeLessThan(0.05);
    const record = parseRunRecord(readFileSync(out, 'utf8'), out);
    expect(record.settings.quantization.extensions).toEqual({ kvFormatKey: 'vllm:fp8_e4m3', kvFormatValue: 'vllm:fp8_e4m3' });
    expect(record.extensions!.map((e) => e.id)).toEqual(['kv-format']);
    expect(record.diagnostics.map((d) => d.message).join('\n')).toContain('Dequantized inside the graph, one layer at a time.');
    // vLLM's --calculate-kv-scales crosses into the worker: other scales, another run.
    const calculated = await cli(['run', '--model', storiesDir(), '--kv-format', 'vllm:fp8_e4m3', '--calculate-kv-scales', '--prompt', 'Once upon a time',
      '--max-new-tokens', '6', '--reference', '--json']);
    expect(calculated.code).toBe(0);
    const calculatedJson = JSON.parse(calculated.out) as RunJsonShape;
    expect(calculatedJson.extensions[0]!.detail).toContain('per-tensor scales calculated from the prompt');
    expect(calculatedJson.reference.meanKl).not.toBe(json.reference.meanKl);
  });

  it('feeds an fp16 graph the dequantized rows (not its own present): the run differs from the reference', async () => {
    // With the present fed back unchanged, a float16 run would equal the full-precision reference (KL exactly 0).
    const { code, out: stdout } = await cli(['run', '--model', storiesDir(), '--onnx', 'onnx/model_fp16.onnx', '--kv-format', 'ort-webgpu:q8',
      '--prompt', 'Once upon a time', '--max-new-tokens', '6', '--reference', '--json']);
    expect(code).toBe(0);
    const json = JSON.parse(stdout) as RunJsonShape;
    expect(json.reference.meanKl).toBeGreaterThan(0);
    expect(json.reference.meanKl).toBeLessThan(0.05);
    // ONNX Runtime's int8: a fp32 scale word and 8 codes per head vector of 8.
    const tokens = json.promptTokens.length + json.tokens.length - 1;
    expect(json.kvBytes.codeBytes).toBe(tokens * 5 * 4 * 2 * (4 + 8));
  });

  it('runs llama.cpp q8_0 on the synthetic model (head_dim 64), K/V apart; --dequantize graph runs q8_0 and refuses +rot with the reason', async () => {
    const q8 = await cli(['run', '--model', 'synthetic', '--kv-format', 'llama.cpp:q8_0', ...PROMPT_IDS, '--max-new-tokens', '4', '--reference', '--json']);
    expect(q8.err).toBe('');
    expect(q8.code).toBe(0);
    const json = JSON.parse(q8.out) as RunJsonShape;
    const tokens = json.promptTokens.length + json.tokens.length - 1;
    // 8 layers × 4 KV heads × K and V of 2 blocks of 34 bytes (fp16 d + 32 int8).
    expect(json.kvBytes).toMatchObject({ codeBytes: tokens * 8 * 4 * 2 * 68, metadataBytes: 0 });
    expect(json.reference.meanKl).toBeLessThan(0.05);

    const apart = await cli(['run', '--model', 'synthetic', '--kv-format-key', 'vllm:fp8_e4m3', '--kv-format-value', 'llama.cpp:q8_0', ...PROMPT_IDS,
      '--max-new-tokens', '4', '--json']);
    expect(apart.code).toBe(0);
    const apartJson = JSON.parse(apart.out) as RunJsonShape;
    expect(apartJson.kvBytes).toMatchObject({ codeBytes: tokens * 8 * 4 * (64 + 68), metadataBytes: 8 * 4 });
    expect(apartJson.extensions[0]!.detail).toMatch(/^K vllm:fp8_e4m3, V llama.cpp:q8_0/);

    const graph = await cli(['run', '--model', 'synthetic', '--kv-format', 'llama.cpp:q8_0', '--dequantize', 'graph', ...PROMPT_IDS, '--max-new-tokens', '4', '--json']);
    expect(graph.code).toBe(0);
    const graphJson = JSON.parse(graph.out) as RunJsonShape;
    expect(graphJson.tokens).toEqual(json.tokens);
    expect(graphJson.kvBytes.codeBytes).toBe(json.kvBytes.codeBytes);
    const rotated = await cli(['run', '--model', 'synthetic', '--kv-format', 'llama.cpp:q8_0+rot', '--dequantize', 'graph', ...PROMPT_IDS, '--max-new-tokens', '2']);
    expect(rotated.code).toBe(1);
    expect(rotated.err).toContain('--dequantize graph cannot run these settings: llama.cpp:q8_0+rot: llama.cpp\'s inverse Hadamard rotation');
  }, 120_000);

  it('refuses a format beside the backend\'s arguments, and one side alone', async () => {
    const withBits = await cli(['run', '--model', 'synthetic', '--kv-format', 'llama.cpp:q8_0', '--nbits', '2']);
    expect(withBits.code).toBe(1);
    expect(withBits.err).toContain('--nbits configures transformers\' QuantizedCache, which --kv-format replaces');
    const oneSide = await cli(['run', '--model', 'synthetic', '--kv-format-key', 'llama.cpp:q8_0']);
    expect(oneSide.code).toBe(1);
    expect(oneSide.err).toContain('--kv-format-key needs --kv-format-value too');
  });
});

describe.skipIf(!hasShared())('kvscope eval --kv-format on synthetic-8b-kv (head_dim 128)', () => {
  it('gives a finite perplexity, q8_0 closer to the reference than q4_0, and records the format and the graph path; host gives the same figures', async () => {
    const results: { ppl: number; kld: number; bits: number }[] = [];
    for (const format of ['llama.cpp:q8_0', 'llama.cpp:q4_0']) {
      const out = join(sandbox.dir(), `${format.replace(/[:.]/g, '_')}.json`);
      const { code, out: stdout, err } = await cli(['eval', '--model', 'synthetic-8b-kv', '--kv-format', format, '--context', '48', '--windows', '2',
        '--json', '--out', out]);
      expect(err).toBe('');
      expect(code).toBe(0);
      const json = JSON.parse(stdout) as { ppl: number; kld: { mean: number }; bitsPerValue: number; dequantize: string };
      expect(Number.isFinite(json.ppl)).toBe(true);
      expect(json.dequantize).toBe('graph');
      results.push({ ppl: json.ppl, kld: json.kld.mean, bits: json.bitsPerValue });
      // the graph path dequantizes the runtime's bytes bit for bit as the host does: the same figures
      const host = await cli(['eval', '--model', 'synthetic-8b-kv', '--kv-format', format, '--context', '48', '--windows', '2', '--dequantize', 'host', '--json']);
      const hostJson = JSON.parse(host.out) as typeof json;
      expect(hostJson.dequantize).toBe('host');
      expect([hostJson.ppl, hostJson.kld.mean, hostJson.bitsPerValue]).toEqual([json.ppl, json.kld.mean, json.bitsPerValue]);
      const record = parseEvalRecord(readFileSync(out, 'utf8'));
      expect(record.settings.quantization.extensions).toEqual({ kvFormatKey: format, kvFormatValue: format });
      expect(record.extensions.join('; ')).toContain(`runtime KV format (write-once)`);
      expect(record.extensions.join('; ')).toContain(`${format}: each row quantized once when written`);
    }
    const [q8, q4] = results as [typeof results[0], typeof results[0]];
    expect(q8.kld).toBeGreaterThan(0);
    expect(q8.kld).toBeLessThan(q4.kld);
    // As llama.cpp counts them: 34 bytes per 32 values, 18 per 32 (the per-layer scales are none here).
    expect(q8.bits).toBeCloseTo(8.5, 12);
    expect(q4.bits).toBeCloseTo(4.5, 12);
  }, 600_000);
});

describe.skipIf(!hasShared())('kvscope eval --kv-format with the lab\'s targets', () => {
  it('quantizes only the keys of layers 0 and 1, and counts their bytes as llama.cpp does', async () => {
    const run = async (parts: string) => {
      const { code, out } = await cli(['eval', '--model', 'synthetic', '--kv-format', 'llama.cpp:q4_0', '--quantize-parts', parts, '--quantize-layers', '0,1',
        '--context', '32', '--windows', '1', '--json']);
      expect(code).toBe(0);
      return JSON.parse(out) as { kld: { mean: number }; bitsPerValue: number };
    };
    const keys = await run('key');
    const both = await run('both');
    // Per token, 8 layers × 4 KV heads × (64 + 64) values; layers 0 and 1 keep q4_0 keys (2 blocks of 18 bytes per head)
    // and fp32 values, the 6 others fp32 keys and values.
    const perToken = 2 * 4 * (36 + 64 * 4) + 6 * 4 * 128 * 4;
    expect(keys.bitsPerValue).toBe((8 * perToken) / (8 * 4 * 128));
    expect(both.bitsPerValue).toBe((8 * (2 * 4 * 72 + 6 * 4 * 128 * 4)) / (8 * 4 * 128));
    expect(keys.kld.mean).toBeGreaterThan(0);
    expect(keys.kld.mean).toBeLessThan(both.kld.mean);
  });
});

describe.skipIf(!hasShared())('kvscope sweep with --kv-format keys', () => {
  it('mixes transformers\' cache and runtime formats in one grid, each point with its own bits per value', async () => {
    const spec = join(sandbox.dir(), 'sweep.json');
    writeFileSync(spec, JSON.stringify({
      model: 'synthetic', fixed: { context: 32, windows: 1 },
      points: [{ 'kv-format': 'llama.cpp:q8_0' }, { 'kv-format-key': 'vllm:fp8_e4m3', 'kv-format-value': 'llama.cpp:q4_0' }, { nbits: 4 }],
    }));
    const out = join(sandbox.dir(), 'sweep');
    const { code } = await cli(['sweep', '--spec', spec, '--out', out]);
    expect(code).toBe(0);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { rows: { status: string; options: Record<string, unknown>; result: { bitsPerValue: number; kldMean: number } }[] };
    expect(results.rows.map((row) => row.status)).toEqual(['ok', 'ok', 'ok']);
    // llama.cpp q8_0: 34 bytes per 32 values; vLLM FP8 keys (8) with q4_0 values (4.5), the fp32 scales per layer amortized in.
    expect(results.rows[0]!.result.bitsPerValue).toBeCloseTo(8.5, 12);
    expect(results.rows[1]!.result.bitsPerValue).toBeGreaterThan(6.25);
    expect(results.rows[1]!.result.bitsPerValue).toBeLessThan(6.3);
    expect(results.rows[0]!.result.kldMean).toBeLessThan(results.rows[1]!.result.kldMean);
  });
});

describe.skipIf(!hasShared())('kvscope run --layer-map with per-layer runtime formats', () => {
  it('mixes quanto 4-bit layers and llama.cpp:q8_0 layers: graph and host give the same tokens and stored bytes, and the record names the map\'s formats', async () => {
    const map = join(sandbox.dir(), 'mixed.yaml');
    writeFileSync(map, Array.from({ length: 8 }, (_, layer) => (layer % 2 === 0
      ? `${layer}: {format_key: llama.cpp:q8_0, format_value: llama.cpp:q8_0}`
      : `${layer}: {nbits_key: 4, nbits_value: 4}`)).join('\n') + '\n');
    const args = ['run', '--model', 'synthetic', '--layer-map', map, '--residual-length', '4', ...PROMPT_IDS, '--max-new-tokens', '8', '--json'];
    const out = join(sandbox.dir(), 'mixed-run.json');
    const graph = await cli([...args, '--out', out]);
    expect(graph.err).toBe('');
    expect(graph.code).toBe(0);
    const host = await cli([...args, '--dequantize', 'host']);
    expect(host.code).toBe(0);
    const graphJson = JSON.parse(graph.out) as RunJsonShape;
    const hostJson = JSON.parse(host.out) as RunJsonShape;
    expect(graphJson.dequantize).toBe('graph');
    expect(hostJson.dequantize).toBe('host');
    expect(graphJson.tokens).toEqual(hostJson.tokens);
    expect(graphJson.flushes).toEqual(hostJson.flushes);
    // q8_0 layers never flush; the quanto layers do (residual 4)
    expect(graphJson.flushes.filter((_, layer) => layer % 2 === 0)).toEqual([0, 0, 0, 0]);
    expect(graphJson.flushes.filter((_, layer) => layer % 2 === 1).every((count) => (count ?? 0) > 0)).toBe(true);
    const { codeBytes, metadataBytes, fullPrecisionBytes, totalBytes } = hostJson.kvBytes;
    expect(graphJson.kvBytes).toMatchObject({ codeBytes, metadataBytes, fullPrecisionBytes, totalBytes });
    const named = graphJson.extensions.map((extension) => extension.detail).join('\n');
    expect(named).toContain('0: K llama.cpp:q8_0 V llama.cpp:q8_0');
    expect(named).toContain('llama.cpp:q8_0 in the layer map\'s layers');
    const record = parseRunRecord(readFileSync(out, 'utf8'), out);
    expect(record.settings.quantization.extensions?.layerMap?.[0]).toEqual({ layer: 0, formatKey: 'llama.cpp:q8_0', formatValue: 'llama.cpp:q8_0' });
  }, 300_000);
});

