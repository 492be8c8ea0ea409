import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../cache/cache-config.js';
import { arrayDifference } from '../../cache/test-support/compare.js';
import { argmax } from '../../engine/sampler.js';
import { hasShared } from '../golden.js';
import { runPath } from '../test-support/path-run.js';
import { storiesSettings } from '../test-support/stories.js';
import { releaseCachedSessions } from './session-cache.js';

/**
 * The in-graph dequantization path on WebGPU (SwiftShader's Vulkan here, as webgpu.test.ts runs it).
 * The rewrite unpacks codes with float arithmetic (WebGPU has no BitShift): Div by a power of two,
 * Floor, Mul and Sub on integers below 256 are exact in WGSL's f32 too, so on WebGPU the graph path
 * gives the host path's logits bit for bit, as on the CPU. Across providers the kernels differ beyond
 * summation order (webgpu.test.ts), and a quantized cache carries such differences into its codes,
 * so WebGPU against CPU is checked as agreement: the same greedy ids and flushes, every step's argmax,
 * logits within 2e-2 relative (observed up to 1.0e-2 over 20 steps, the same on the host path).
 * This file runs in a fork of its own; one WebGPU session at a time, a short run (SwiftShader is slow).
 */
const SWIFTSHADER = '/usr/lib/chromium/vk_swiftshader_icd.json';
const ready = existsSync(SWIFTSHADER) && hasShared();

describe.skipIf(!ready)(ready ? 'WebGPU (SwiftShader) runs the in-graph path and agrees with the CPU' : `skipped: ${SWIFTSHADER} or ../shared is missing`, () => {
  if (ready) process.env['VK_ICD_FILENAMES'] ??= SWIFTSHADER;
  afterAll(() => releaseCachedSessions());

  it('stories260k, quanto 4-bit g32 R8, 20 greedy steps across two flushes: graph = host bit for bit on WebGPU; WebGPU agrees with CPU', async () => {
    const settings = storiesSettings({
      cacheMode: 'quantized', quantization: { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, groupSize: 32, residualLength: 8 },
      prompt: 'The sun was hot and', maxNewTokens: 20,
    });
    const cpu = await runPath(settings, 'graph');
    const gpu = await runPath({ ...settings, executionProvider: 'webgpu' }, 'graph');
    const gpuHost = await runPath({ ...settings, executionProvider: 'webgpu' }, 'host');
    expect(gpu.executionProvider).toBe('webgpu');
    const differing = gpu.logits.flatMap((bits, step) => (Buffer.compare(bits, gpuHost.logits[step]!) === 0 ? [] : [step]));
    expect(differing, 'WebGPU steps whose graph-path logits differ from the host path\'s in any bit').toEqual([]);
    expect(gpu.ids).toEqual(cpu.ids);
    expect(gpu.flushCounts).toEqual(cpu.flushCounts);
    expect(cpu.flushCounts.every((n) => n === 2)).toBe(true);
    let worst = 0;
    for (let step = 0; step < cpu.logits.length; step++) {
      const a = new Float32Array(cpu.logits[step]!.buffer.slice(0));
      const b = new Float32Array(gpu.logits[step]!.buffer.slice(0));
      const difference = arrayDifference(b, a);
      worst = Math.max(worst, difference.relFro);
      expect(argmax(b.subarray(b.length - 512)), `step ${step}`).toBe(argmax(a.subarray(a.length - 512)));
    }
    console.info(`in-graph path, webgpu vs cpu logits: worst relative Frobenius over ${cpu.logits.length} steps ${worst.toExponential(2)}`);
    expect(worst).toBeLessThan(2e-2);
  }, 300_000);
});
