import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { probeExecutionProvider, probeInWorker } from './execution-provider-probe.js';
import { executionProviderStatuses } from './execution-providers.js';

const SWIFTSHADER = '/usr/lib/chromium/vk_swiftshader_icd.json';
const env = (patch: Record<string, string | undefined>): NodeJS.ProcessEnv => {
  const copy = { ...process.env, ...patch };
  for (const [key, value] of Object.entries(patch)) if (value === undefined) delete copy[key];
  return copy;
};

describe('execution provider probe (a real session in a child process)', () => {
  it('runs on cpu', async () => {
    expect(await probeExecutionProvider('cpu')).toEqual({ ok: true });
  });

  it('probes in a worker thread too (the desktop app, whose binary cannot run as Node)', async () => {
    const ort = createRequire(import.meta.url).resolve('onnxruntime-node');
    expect(await probeInWorker('cpu', ort)).toEqual({ ok: true });
    const cuda = await probeInWorker('cuda', ort);
    if (!cuda.ok) expect(cuda.message.length).toBeGreaterThan(0);
  });

  it.runIf(process.platform === 'linux')('finds no WebGPU adapter where Vulkan has no driver, and says so', async () => {
    // an ICD file that does not exist: no Vulkan driver at all, as on a machine without a GPU
    const outcome = await probeExecutionProvider('webgpu', env({ VK_ICD_FILENAMES: '/nonexistent/icd.json' }));
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.message).toMatch(/adapter/i);
  });

  it.runIf(existsSync(SWIFTSHADER))('finds SwiftShader\'s adapter when Vulkan is pointed at it', async () => {
    expect(await probeExecutionProvider('webgpu', env({ VK_ICD_FILENAMES: SWIFTSHADER }))).toEqual({ ok: true });
  });

  it('offers WebGPU only when the probe found an adapter, with the SwiftShader hint otherwise', async () => {
    const refused = await executionProviderStatuses(async (name) => (name === 'webgpu' ? { ok: false, message: 'Failed to get a WebGPU adapter: No supported adapters' } : { ok: true }));
    const webgpu = refused.find((status) => status.name === 'webgpu')!;
    if (webgpu.reason?.startsWith('onnxruntime-node') === true) {
      expect(webgpu).toMatchObject({ available: false, reason: expect.stringContaining('no adapter was found here: Failed to get a WebGPU adapter') });
      if (process.platform === 'linux') expect(webgpu.fix).toContain('VK_ICD_FILENAMES');
    }
    const found = await executionProviderStatuses(async () => ({ ok: true }));
    expect(found.find((status) => status.name === 'cpu')).toEqual({ name: 'cpu', available: true });
  });
});
