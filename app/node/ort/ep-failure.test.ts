import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import { sharedDir } from '../golden.js';
import { runGeneration } from '../run-generation.js';
import { createFailure, runFailure } from './ep-failure.js';
import { releaseCachedSessions } from './session-cache.js';

/** onnxruntime 1.30's WebGPU EP on an adapter without shader-f16 (SwiftShader), verbatim. */
const NO_F16 = "Non-zero status code returned while running Gather node. Name:'/model/embed_tokens/Gather' Status Message: " +
  'shader_helper.cc:416 GenerateSourceCode Program Gather requires f16 but the device does not support it.';

describe('execution-provider failures say their cause', () => {
  it('an fp16 graph on a WebGPU adapter without shader-f16: refused, with a fix about the graph or the EP', () => {
    const error = runFailure(new Error(NO_F16), 'model.onnx', 'webgpu');
    expect(error).toMatchObject({ name: 'ExecutionProviderRefusedError' });
    expect(error.message).toMatch(/^this WebGPU adapter has no shader-f16, and model\.onnx computes in fp16 \(onnxruntime: "Non-zero status/);
    expect((error as { fix?: string }).fix).toBe('Use a graph that computes in fp32 (an fp32 export of the model, not an fp16 or q4f16 variant) or another execution provider (--ep cpu).');
    expect(createFailure(NO_F16, 'model.onnx')).toMatchObject({ name: 'ExecutionProviderRefusedError' });
  });

  it('other failures keep onnxruntime\'s text; the fix points at the preflight, or at the cpu EP off cpu', () => {
    const cpu = runFailure(new Error('Non-zero status code returned while running MatMul node.'), 'model.onnx', 'cpu');
    expect(cpu).toMatchObject({ name: 'GenerationError', message: 'onnxruntime failed to run model.onnx: Non-zero status code returned while running MatMul node.' });
    expect((cpu as { fix?: string }).fix).toMatch(/kvscope preflight --config/);
    expect((runFailure(new Error('x'), 'model.onnx', 'webgpu') as { fix?: string }).fix).toMatch(/^Try --ep cpu/);
    expect(createFailure('some other failure', 'model.onnx')).toBeNull();
  });
});

/** The real thing, where SwiftShader is installed (toolchain.md §3b): it has no shader-f16. */
const SWIFTSHADER = '/usr/lib/chromium/vk_swiftshader_icd.json';
describe.skipIf(!existsSync(SWIFTSHADER))('the shared fp16 export on WebGPU (SwiftShader)', () => {
  process.env['VK_ICD_FILENAMES'] ??= SWIFTSHADER;
  afterAll(() => releaseCachedSessions());

  it('is refused with the shader-f16 message, not a fix about the config', async () => {
    await expect(runGeneration({
      model: join(sharedDir(), 'models', 'ort-genai-tiny', 'llama-fp16'), executionProvider: 'webgpu', cacheMode: 'dynamic',
      quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS, prompt: '', promptTokenIds: [1, 2, 3], maxNewTokens: 2,
      sampling: { greedy: true, temperature: 1, topK: 0, topP: 1, seed: 0 }, reference: false,
    })).rejects.toMatchObject({ name: 'ExecutionProviderRefusedError', message: expect.stringContaining('this WebGPU adapter has no shader-f16') });
  });
});
