import { describe, expect, it } from 'vitest';
import { DEFAULT_RUN_FORM, toRunSettings } from '../store/settings-slice.js';
import { createFakeWorkbenchApi } from './fake-workbench-api.js';
import { ManualScheduler } from './manual-scheduler.js';

describe('the fake engine reports the machine it stands for', () => {
  it('has no WebGPU adapter by default: WebGPU unavailable with the real probe\'s reason and fix, and a run check on it refused', async () => {
    const api = createFakeWorkbenchApi({ scheduler: new ManualScheduler() });
    const webgpu = (await api.environment()).executionProviders.find((ep) => ep.name === 'webgpu');
    expect(webgpu).toEqual({
      name: 'webgpu', available: false,
      reason: 'onnxruntime-node 1.30.0 has WebGPU, but no adapter was found here: Failed to get a WebGPU adapter: No supported adapters',
      fix: expect.stringContaining('VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json'),
    });
    const check = await api.checkRun(toRunSettings({ ...DEFAULT_RUN_FORM, cacheMode: 'dynamic', executionProvider: 'webgpu' }, 'synthetic', null));
    expect(check.ok).toBe(false);
    expect(check.refusal).toEqual({ message: webgpu!.reason, fix: webgpu!.fix });
  });

  it('offers WebGPU on a fake machine with an adapter', async () => {
    const api = createFakeWorkbenchApi({ scheduler: new ManualScheduler(), webgpuAdapter: true });
    expect((await api.environment()).executionProviders.find((ep) => ep.name === 'webgpu')).toEqual({ name: 'webgpu', available: true });
    const check = await api.checkRun(toRunSettings({ ...DEFAULT_RUN_FORM, cacheMode: 'dynamic', executionProvider: 'webgpu' }, 'synthetic', null));
    expect(check.ok).toBe(true);
  });
});
