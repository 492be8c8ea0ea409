/**
 * What a host says about WebGPU when its probe found no adapter (no GPU, or no Vulkan driver Dawn
 * accepts), in one place: the Node host (app/node/ort/execution-providers.ts) and the fake engine of
 * the renderer's test build say the same words, so a test of the one holds for the other.
 */

/** Debian's chromium package ships SwiftShader's Vulkan driver here (toolchain.md §4). */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

/** onnxruntime's answer when a WebGPU session finds no adapter, as readableOrtMessage leaves it. */
export const NO_WEBGPU_ADAPTER_MESSAGE = 'Failed to get a WebGPU adapter: No supported adapters';

/** Why WebGPU is not offered, from the probe's message. */
export function noWebgpuAdapterReason(ortVersion: string, probeMessage: string): string {
  return `onnxruntime-node ${ortVersion} has WebGPU, but no adapter was found here: ${probeMessage}`;
}

/** How to get an adapter: SwiftShader on Linux (slow, for correctness checks), else a GPU and its driver. */
export function webgpuAdapterFixFor(platform: string, swiftShaderInstalled: boolean): string {
  if (platform !== 'linux') return 'Check that a GPU and its driver are available, or run on cpu.';
  return swiftShaderInstalled
    ? `Without a GPU, point Vulkan at SwiftShader: set VK_ICD_FILENAMES=${SWIFTSHADER_ICD} before starting kvscope (slow; for correctness checks), or run on cpu.`
    : 'Without a GPU, install Debian\'s chromium package (it ships SwiftShader) and set ' +
      `VK_ICD_FILENAMES=${SWIFTSHADER_ICD} before starting kvscope (slow; for correctness checks), or run on cpu.`;
}
