import { describe, expect, it } from 'vitest';
import { availableExecutionProviders, ensureExecutionProvider, executionProviderStatuses, ortVersion } from './execution-providers.js';
import { readableOrtMessage } from './ort-message.js';

describe('execution providers', () => {
  it('maps onnxruntime-node\'s backends to kvscope names; cpu is always there', () => {
    const available = availableExecutionProviders();
    expect(available[0]).toBe('cpu');
    for (const name of available) expect(['cpu', 'webgpu', 'cuda', 'dml', 'coreml']).toContain(name);
    expect(ortVersion()).toMatch(/^\d+\.\d+\.\d+/);
    expect(() => ensureExecutionProvider('cpu')).not.toThrow();
  });

  it.runIf(process.platform === 'linux' && process.arch === 'x64')('refuses CUDA without its provider library, with the install command', () => {
    if (availableExecutionProviders().includes('cuda')) return;
    expect(() => ensureExecutionProvider('cuda')).toThrow(expect.objectContaining({
      name: 'ExecutionProviderRefusedError',
      message: expect.stringMatching(/^The CUDA execution provider is not installed in onnxruntime-node 1\.30\.0 \(linux\/x64\)\. Available here: cpu/),
      fix: expect.stringContaining('ONNXRUNTIME_NODE_INSTALL=cuda12 node node_modules/onnxruntime-node/script/install.js'),
    }));
  });

  it('lists as available in a refusal only the providers whose session really opened (no WebGPU without an adapter)', async () => {
    const statuses = await executionProviderStatuses(async (name) => (name === 'webgpu' ? { ok: false, message: 'Failed to get a WebGPU adapter' } : { ok: true }));
    const webgpu = statuses.find((status) => status.name === 'webgpu')!;
    if (availableExecutionProviders().includes('webgpu')) expect(webgpu.available).toBe(false);
    for (const refused of statuses.filter((status) => !status.available && /Available here:/.test(status.reason ?? ''))) {
      const listed = /Available here: ([^.]*)\./.exec(refused.reason!)![1]!.split(', ');
      expect(listed, refused.name).toContain('cpu');
      expect(listed, refused.name).not.toContain('webgpu');
    }
    expect(statuses.some((status) => /Available here:/.test(status.reason ?? ''))).toBe(true);
  });

  it.runIf(process.platform !== 'win32')('refuses DirectML outside Windows', () => {
    expect(() => ensureExecutionProvider('dml')).toThrow(/DirectML is part of onnxruntime-node's Windows build only/);
  });
});

describe('readableOrtMessage', () => {
  it('drops source paths, C++ signatures, colour codes and stack lines', () => {
    const raw = '\u001b[1;31m/onnxruntime_src/onnxruntime/core/providers/webgpu/webgpu_context.cc:136 onnxruntime::webgpu::WebGpuContext::Initialize(const onnxruntime::webgpu::WebGpuContextConfig&)::<lambda()> adapter_result.status == wgpu::RequestAdapterStatus::Success was false. Failed to get a WebGPU adapter: No supported adapters\n    at foo (bar.js:1:2)\u001b[m';
    expect(readableOrtMessage(new Error(raw))).toBe('Failed to get a WebGPU adapter: No supported adapters');
    expect(readableOrtMessage(new Error('Load model from x.onnx failed:Protobuf parsing failed.'))).toBe('Load model from x.onnx failed:Protobuf parsing failed.');
  });
});
