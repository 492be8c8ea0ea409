import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { ExecutionProviderRefusedError } from '../../engine/engine-errors.js';
import { EXECUTION_PROVIDERS, type ExecutionProviderName } from '../../engine/types.js';
import { noWebgpuAdapterReason, SWIFTSHADER_ICD, webgpuAdapterFixFor } from '../../engine/webgpu-availability.js';
import { probeExecutionProvider, type ProbeOutcome } from './execution-provider-probe.js';

/** onnxruntime-node's backend names → kvscope's (tensorrt and others have no kvscope name). */
const BACKEND_NAMES: Readonly<Record<string, ExecutionProviderName>> = {
  cpu: 'cpu', webgpu: 'webgpu', cuda: 'cuda', dml: 'dml', coreml: 'coreml',
};

/**
 * The execution providers this onnxruntime-node build can use here: the bundled ones
 * (`ort.listSupportedBackends()`: cpu and webgpu on Linux x64, dml on Windows, coreml on macOS), plus
 * CUDA where its provider library was installed (`bundled: false` means the npm package ships only the
 * switch; the install script fetches the library). WebGPU being listed does not promise an adapter:
 * session creation is the real test (toolchain.md §3b), which executionProviderStatuses() makes.
 */
export function availableExecutionProviders(): ExecutionProviderName[] {
  const available = new Set<ExecutionProviderName>();
  for (const backend of ort.listSupportedBackends()) {
    const name = BACKEND_NAMES[backend.name];
    if (name === undefined) continue;
    if (backend.bundled || providerLibraryInstalled(backend.name)) available.add(name);
  }
  return EXECUTION_PROVIDERS.filter((name) => available.has(name));
}

/** onnxruntime's version, e.g. `1.30.0`. */
export function ortVersion(): string {
  return ort.env.versions.node ?? ort.env.versions.common;
}

/**
 * Throws ExecutionProviderRefusedError, saying how to get the provider, when it is not available.
 * `workingHere` is what the message lists as available: by default the providers this build has;
 * the status list passes those that really opened a session (a WebGPU without an adapter is not one).
 */
export function ensureExecutionProvider(name: ExecutionProviderName, workingHere?: readonly ExecutionProviderName[]): void {
  if (!EXECUTION_PROVIDERS.includes(name)) {
    throw new ExecutionProviderRefusedError(`unknown execution provider "${String(name)}".`, `Choose one of ${EXECUTION_PROVIDERS.join(', ')}.`);
  }
  const available = availableExecutionProviders();
  if (available.includes(name)) return;
  const here = `${process.platform}/${process.arch}`;
  const version = ortVersion();
  const fallback = `Available here: ${(workingHere ?? available).join(', ')}.`;
  switch (name) {
    case 'cuda':
      throw new ExecutionProviderRefusedError(
        `The CUDA execution provider is not installed in onnxruntime-node ${version} (${here}). ${fallback}`,
        process.platform === 'linux' && process.arch === 'x64'
          ? 'On Linux x64 with CUDA 12, install it with `ONNXRUNTIME_NODE_INSTALL=cuda12 node node_modules/onnxruntime-node/script/install.js`, or run on cpu.'
          : 'onnxruntime-node ships CUDA for Linux x64 only; run on cpu (or webgpu).');
    case 'dml':
      throw new ExecutionProviderRefusedError(
        `DirectML is part of onnxruntime-node's Windows build only; this is ${here}. ${fallback}`,
        'Run on cpu or webgpu here, or use DirectML on Windows.');
    case 'coreml':
      throw new ExecutionProviderRefusedError(
        `CoreML is part of onnxruntime-node's macOS build only; this is ${here}. ${fallback}`,
        'Run on cpu or webgpu here, or use CoreML on macOS.');
    default:
      throw new ExecutionProviderRefusedError(`The ${name} execution provider is not in onnxruntime-node ${version} on ${here}. ${fallback}`,
        `Run on ${available[0] ?? 'cpu'}.`);
  }
}

/** The fix for a WebGPU session that found no adapter (no GPU, or no Vulkan driver Dawn accepts). */
export function webgpuAdapterFix(): string {
  return webgpuAdapterFixFor(process.platform, existsSync(SWIFTSHADER_ICD));
}

function providerLibraryInstalled(backend: string): boolean {
  if (backend !== 'cuda' && backend !== 'tensorrt') return false;
  try {
    const require = createRequire(import.meta.url);
    const entry = require.resolve('onnxruntime-node');
    const binaries = join(dirname(entry), '..', 'bin', 'napi-v6', process.platform, process.arch);
    return existsSync(join(binaries, `libonnxruntime_providers_${backend}.so`));
  } catch {
    return false;
  }
}

/** One execution provider as this host can offer it. */
export interface ExecutionProviderStatus {
  readonly name: ExecutionProviderName;
  readonly available: boolean;
  /** why it cannot run here */
  readonly reason?: string;
  /** how to make it run */
  readonly fix?: string;
}

/** Providers that onnxruntime-node lists without promising they run: only a session tells (execution-provider-probe.ts). */
const PROBED: readonly ExecutionProviderName[] = ['webgpu', 'cuda'];

let statuses: Promise<ExecutionProviderStatus[]> | undefined;

/**
 * Every execution provider with whether it really runs here: first what this onnxruntime-node build
 * has (ensureExecutionProvider, whose refusal says how to get it), then, for WebGPU and CUDA, a session
 * created for real in a child process (an adapter was found, the CUDA libraries load). Probed once per
 * process; later calls share the answer. `probe` is replaceable for tests.
 */
export function executionProviderStatuses(probe: (name: ExecutionProviderName) => Promise<ProbeOutcome> = probeExecutionProvider): Promise<ExecutionProviderStatus[]> {
  if (probe !== probeExecutionProvider) return computeStatuses(probe);
  statuses ??= computeStatuses(probe);
  return statuses;
}

/**
 * Every provider's status: the build's own check, then a real session for the probed ones. The
 * refusals' "Available here:" lists only the providers that passed both, so a WebGPU whose adapter
 * is missing is not offered as an alternative to CUDA in the same list that calls it unavailable.
 */
async function computeStatuses(probe: (name: ExecutionProviderName) => Promise<ProbeOutcome>): Promise<ExecutionProviderStatus[]> {
  const built = availableExecutionProviders();
  const probed = new Map(await Promise.all(built.map(async (name) => [name, await buildStatus(name, probe)] as const)));
  const working = built.filter((name) => probed.get(name)!.available);
  return EXECUTION_PROVIDERS.map((name): ExecutionProviderStatus => {
    const status = probed.get(name);
    if (status !== undefined) return status;
    try {
      ensureExecutionProvider(name, working);
      return { name, available: true };
    } catch (error) {
      const fix = (error as { fix?: unknown }).fix;
      return { name, available: false, reason: (error as Error).message, ...(typeof fix === 'string' ? { fix } : {}) };
    }
  });
}

/** A provider this build has: available unless its probe session fails. */
async function buildStatus(name: ExecutionProviderName, probe: (name: ExecutionProviderName) => Promise<ProbeOutcome>): Promise<ExecutionProviderStatus> {
  if (!PROBED.includes(name)) return { name, available: true };
  const outcome = await probe(name);
  if (outcome.ok) return { name, available: true };
  return name === 'webgpu'
    ? { name, available: false, reason: noWebgpuAdapterReason(ortVersion(), outcome.message), fix: webgpuAdapterFix() }
    : { name, available: false, reason: `The CUDA provider library is installed, but a CUDA session could not be created: ${outcome.message}`, fix: 'Install the CUDA 12 runtime and cuDNN 9 that onnxruntime-node expects (LD_LIBRARY_PATH must find them), or run on cpu.' };
}
