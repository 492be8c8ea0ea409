import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../cache/cache-config.js';
import { parseModelConfig } from '../config/parse-model-config.js';
import { sharedDir } from '../node/golden.js';
import { parseLayerMap } from '../cache/layer-map.js';
import { checkRun } from './check-run.js';

/** stories260k: 5 layers, 4 KV heads of 8 dims, 512 positions. "Once upon a time" encodes to 5 tokens. */
const config = parseModelConfig(readFileSync(join(sharedDir(), 'models', 'stories260k', 'config.json'), 'utf8'), 'stories260k/config.json');
const quantized = (patch: Partial<QuantizedCacheSettings> = {}, maxNewTokens = 128) =>
  ({ cacheMode: 'quantized' as const, quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, ...patch }, maxNewTokens });

describe('checkRun', () => {
  it('refuses transformers\' defaults on a 5-token prompt with the backend\'s own message, and offers fixes that run', () => {
    const check = checkRun(config, quantized(), 5);
    expect(check.ok).toBe(false);
    expect(check.promptTokens).toBe(5);
    expect(check.contextTokens).toBe(133);
    expect(check.maxPositions).toBe(512);
    // quanto axis 0 groups H·S·D = 4·5·8 = 160 values: 64 does not divide them
    expect(check.refusal?.message).toMatch(/^Group size \(64\) must be a divisor of \(160\)/);
    expect(check.failure).toMatchObject({ step: 0, seq: 5 });
    const kinds = check.fixes.map((fix) => fix.kind);
    expect(kinds).toContain('group-size');
    expect(kinds).toContain('pad-prompt');
    expect(check.fixes.find((fix) => fix.kind === 'group-size')).toMatchObject({ label: 'Use q_group_size 32', quantization: { groupSize: 32 } });
    expect(check.fixes.find((fix) => fix.kind === 'pad-prompt')).toMatchObject({ padPromptTo: 6 });
    // each fix, applied, passes
    for (const fix of check.fixes) {
      const run = quantized({ ...fix.quantization }, fix.maxNewTokens ?? 128);
      expect(checkRun(config, run, fix.padPromptTo ?? 5).ok, fix.label).toBe(true);
    }
  });

  it('accepts an even prompt with the defaults and names the flushes it will make', () => {
    const check = checkRun(config, quantized({}, 200), 6);
    expect(check).toMatchObject({ ok: true, refusal: null, fixes: [], flushes: 1, failure: null });
  });

  it('refuses a run whose flush within max new tokens fails, and offers fewer tokens or another residual', () => {
    // HQQ axis 0 on N = 4·S·8 = 32·S values with g 64: S = 6 passes, 6 + 129 = 135 at the flush of step 129 does not
    const check = checkRun(config, quantized({ backend: 'hqq', nbits: 4, residualLength: 129 }, 200), 6);
    expect(check.ok).toBe(false);
    expect(check.failure).toMatchObject({ step: 129, seq: 135 });
    expect(check.refusal?.message).toContain('the flush at decode step 129');
    expect(check.fixes.find((fix) => fix.kind === 'max-new-tokens')).toMatchObject({ maxNewTokens: 129 });
    expect(check.fixes.find((fix) => fix.kind === 'residual-length')).toMatchObject({ quantization: { residualLength: 128 } });
    // a run that stops before the failing flush is not refused
    expect(checkRun(config, quantized({ backend: 'hqq', nbits: 4, residualLength: 129 }, 129), 6).ok).toBe(true);
  });

  it('follows the kvscope extensions as the cache applies them: sink tokens leave the quantized length shorter', () => {
    // 5 tokens with 1 sink: 4 quantized, 32·4 = 128 values divide into groups of 64; every flush too
    expect(checkRun(config, quantized({ extensions: { sinkTokens: 1 } }), 5)).toMatchObject({ ok: true, failure: null });
    // 8-bit keys on quanto: the preflight's own refusal
    expect(checkRun(config, quantized({ groupSize: 32, extensions: { nbitsKey: 8 } }), 5).refusal?.message).toContain('but got 8');
  });

  it('keeps a dynamic cache\'s verdict to what a dynamic cache can fail on', () => {
    expect(checkRun(config, { ...quantized(), cacheMode: 'dynamic' }, 5)).toMatchObject({ ok: true, preflight: null, flushes: 0 });
    expect(checkRun(config, { ...quantized(), cacheMode: 'dynamic', maxNewTokens: 0 }, 5).refusal?.message).toContain('at least 1');
  });

  it('notes positions past max_position_embeddings without refusing', () => {
    const check = checkRun(config, quantized({ groupSize: 32 }, 600), 6);
    expect(check.ok).toBe(true);
    expect(check.notes[0]).toContain('606 positions, past max_position_embeddings = 512');
  });

  it('refuses an explicit in-graph path the graph cannot honour, with the engine\'s reason; the default and host run', () => {
    const sinks = { ...quantized({ groupSize: 32, extensions: { sinkTokens: 4 } }), dequantize: 'graph' as const };
    const refused = checkRun(config, sinks, 6);
    expect(refused.ok).toBe(false);
    expect(refused.refusal?.message).toBe('--dequantize graph cannot run these settings: the in-graph path does not express the kvscope extension(s) attention sinks.');
    expect(refused.refusal?.fix).toContain('in the graph where the settings allow');
    expect(checkRun(config, { ...sinks, dequantize: undefined }, 6).ok).toBe(true);
    expect(checkRun(config, { ...sinks, dequantize: 'host' }, 6).ok).toBe(true);
    const hqq3 = checkRun(config, { ...quantized({ backend: 'hqq', nbits: 3, axisKey: 0, axisValue: 0, groupSize: 32 }), dequantize: 'graph' }, 6);
    expect(hqq3.refusal).toBeNull();
    // head_dim 8: ONNX Runtime's q8 takes it (a power of two ≥ 8), the graph does not decode it
    const ort8 = checkRun(config, { ...quantized({ extensions: { kvFormatKey: 'ort-webgpu:q8', kvFormatValue: 'ort-webgpu:q8' } }), dequantize: 'graph' }, 6);
    expect(ort8.refusal?.message).toMatch(/^--dequantize graph cannot run these settings: ort-webgpu:q8: its per-row fp32 scale is stored as four bytes/);
    const fp8 = checkRun(config, { ...quantized({ extensions: { kvFormatKey: 'vllm:fp8_e4m3', kvFormatValue: 'vllm:fp8_e5m2' } }), dequantize: 'graph' }, 6);
    expect(fp8.refusal).toBeNull();
    expect(checkRun(config, { ...quantized({ groupSize: 32 }), dequantize: 'graph' }, 6).ok).toBe(true);
  });

  it('says before Run when the run never flushes (the defaults\' residual 128 against 128 new tokens)', () => {
    const quiet = checkRun(config, quantized({ groupSize: 32 }, 128), 6);
    expect(quiet.ok).toBe(true);
    expect(quiet.flushes).toBe(0);
    expect(quiet.notes).toContain('This run never flushes: the residual holds 128 tokens and the run adds only 127 after the prefill, ' +
      'so the prompt\'s 6 tokens are quantized once and every generated token stays in full precision. To measure flushes, lower the residual length to 127 or less, or ask for 129 new tokens or more.');
    // both fixes the note offers do flush
    expect(checkRun(config, quantized({ groupSize: 32, residualLength: 127 }, 128), 6).flushes).toBeGreaterThan(0);
    expect(checkRun(config, quantized({ groupSize: 32 }, 129), 6).flushes).toBeGreaterThan(0);
    const flushing = checkRun(config, quantized({ groupSize: 32, residualLength: 32 }, 128), 6);
    expect(flushing.flushes).toBeGreaterThan(0);
    expect(flushing.notes.some((note) => note.includes('never flushes'))).toBe(false);
  });

  it('checks a layer map\'s own runtime formats (format_key/format_value) with each runtime\'s refusal, and the backend on the other layers', () => {
    // head_dim 8: llama.cpp refuses its blocks of 32 in layers 1 and 3; vLLM's FP8 takes it
    const map = (text: string) => quantized({ groupSize: 32, extensions: { layerMap: parseLayerMap(text, 'map.yaml') } });
    const refused = checkRun(config, map('1: {format_key: llama.cpp:q8_0, format_value: vllm:fp8_e4m3}\n3: {format_key: llama.cpp:q8_0, format_value: vllm:fp8_e4m3}\n'), 6);
    expect(refused.ok).toBe(false);
    expect(refused.refusal?.message).toContain('K cache type q8_0 with block size 32 does not divide n_embd_head_k=8');
    expect(refused.refusal?.message).toContain('kvscope extension --layer-map format_key (layers 1, 3) llama.cpp:q8_0');
    expect(refused.preflight?.diagnostics.find((d) => d.code === 'kv-format-refused')?.layers).toEqual([1, 3]);
    // FP8 layers beside quanto layers: the quanto layers still meet quanto's rules (group size 64 does not divide 4·5·8 = 160 at a 5-token prefill)
    const fp8 = '1: {format_key: vllm:fp8_e4m3, format_value: vllm:fp8_e5m2}\n';
    expect(checkRun(config, map(fp8), 6).ok).toBe(true);
    const quantoRefused = checkRun(config, { ...map(fp8), quantization: { ...map(fp8).quantization, groupSize: 64 } }, 5);
    expect(quantoRefused.refusal?.message).toMatch(/^Group size \(64\) must be a divisor of \(160\)/);
    // with every quantized layer in a runtime format, no quanto rule is left to refuse the same run
    const allFormats = Array.from({ length: 5 }, (_, layer) => `${layer}: {format_key: vllm:fp8_e4m3, format_value: vllm:fp8_e4m3}`).join('\n');
    expect(checkRun(config, { ...map(allFormats), quantization: { ...map(allFormats).quantization, groupSize: 64 } }, 5).ok).toBe(true);
    // the graph path decodes FP8 and quanto alike: the mixed map runs there
    expect(checkRun(config, { ...map(fp8), dequantize: 'graph' }, 6).refusal).toBeNull();
    const rotated = checkRun(config, { ...map('1: {format_key: llama.cpp:q8_0+rot, format_value: vllm:fp8_e4m3}\n'), dequantize: 'graph' }, 6);
    expect(rotated.ok).toBe(false);
  });
});
