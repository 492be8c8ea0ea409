import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { arrayDifference } from '../../cache/test-support/compare.js';
import { readDecoderIo } from '../../engine/decoder-io.js';
import type { DecoderSession } from '../../engine/decoder-session.js';
import { argmax } from '../../engine/sampler.js';
import { StepInputs } from '../../engine/step-inputs.js';
import { runGeneration } from '../run-generation.js';
import { storiesDir, storiesSettings } from '../test-support/stories.js';
import { createOrtDecoderSession } from './ort-decoder-session.js';
import { releaseCachedSessions } from './session-cache.js';

/**
 * WebGPU on a machine without a GPU runs on SwiftShader's Vulkan (toolchain.md §3b), which Debian's
 * chromium package ships. This file runs in its own fork (vitest `forks` pool), so setting the Vulkan
 * driver variable here touches no other test; ORT reads it when the first WebGPU session starts.
 */
const SWIFTSHADER = '/usr/lib/chromium/vk_swiftshader_icd.json';
const hasSwiftShader = existsSync(SWIFTSHADER);
const title = hasSwiftShader
  ? 'WebGPU (SwiftShader) matches the CPU provider on stories260k'
  : `WebGPU check skipped: ${SWIFTSHADER} is missing (install Debian's chromium package for SwiftShader)`;

describe.skipIf(!hasSwiftShader)(title, () => {
  if (hasSwiftShader) process.env['VK_ICD_FILENAMES'] ??= SWIFTSHADER;
  afterAll(() => releaseCachedSessions());

  it('prefill logits agree with CPU (relative Frobenius error < 1e-3, max abs < 2e-2, same argmax per row)', async () => {
    const path = join(storiesDir(), 'onnx', 'model.onnx');
    const sessions: DecoderSession[] = [];
    try {
      const cpu = await createOrtDecoderSession(path, { executionProvider: 'cpu' });
      sessions.push(cpu);
      const gpu = await createOrtDecoderSession(path, { executionProvider: 'webgpu' });
      sessions.push(gpu);
      const io = readDecoderIo(cpu.inputs, cpu.outputs, 'model.onnx').io!;
      const inputs = new StepInputs(io, cpu.inputs);
      const logitsOf = async (session: DecoderSession): Promise<Float32Array> => {
        const feeds = inputs.feeds([1, 403, 407, 261, 378], 0);
        for (const layer of io.kvLayers) {
          feeds[layer.pastKey] = { type: 'float32', dims: [1, 4, 0, 8], data: new Float32Array(0) };
          feeds[layer.pastValue] = { type: 'float32', dims: [1, 4, 0, 8], data: new Float32Array(0) };
        }
        return (await session.run(feeds))['logits']!.data as Float32Array;
      };
      const [a, b] = [await logitsOf(cpu), await logitsOf(gpu)];
      // WebGPU's kernels (on SwiftShader) differ from the CPU's beyond summation order: observed
      // max |Δ| 4.9e-3 and relative Frobenius 1.5e-4 over 5 layers; the ranking must not change.
      const difference = arrayDifference(b, a);
      console.info(`webgpu vs cpu prefill logits: max |Δ| ${difference.maxAbs.toExponential(2)}, relative Frobenius ${difference.relFro.toExponential(2)}`);
      expect(difference.relFro).toBeLessThan(1e-3);
      expect(difference.maxAbs).toBeLessThan(2e-2);
      const vocab = 512;
      for (let row = 0; row < a.length / vocab; row++) {
        expect(argmax(b.subarray(row * vocab, (row + 1) * vocab)), `row ${row}`).toBe(argmax(a.subarray(row * vocab, (row + 1) * vocab)));
      }
    } finally {
      for (const session of sessions) await session.dispose();
    }
  });

  it('greedy ids match CPU and the result says webgpu ran', async () => {
    const settings = storiesSettings({ maxNewTokens: 24 });
    const [cpu, gpu] = [await runGeneration(settings, {}), await runGeneration({ ...settings, executionProvider: 'webgpu' }, {})];
    expect(gpu.executionProvider).toBe('webgpu');
    expect(gpu.generatedTokenIds).toEqual(cpu.generatedTokenIds);
  });
});
