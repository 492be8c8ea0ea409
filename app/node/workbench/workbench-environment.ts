import type { ExecutionProviderName } from '../../engine/types.js';
import type { WorkbenchEnvironment } from '../../protocol/workbench-api.js';
import type { ProbeOutcome } from '../ort/execution-provider-probe.js';
import { executionProviderStatuses, ortVersion } from '../ort/execution-providers.js';

/**
 * What the workbench runs on. Each execution provider is offered only when it runs here: the run's
 * own check (ensureExecutionProvider), then a real session for WebGPU and CUDA (executionProviderStatuses),
 * so WebGPU is never offered where no adapter exists; an unavailable one carries why and how to enable it.
 */
export async function workbenchEnvironment(
  kvscopeVersion: string, probe?: (name: ExecutionProviderName) => Promise<ProbeOutcome>,
): Promise<WorkbenchEnvironment> {
  return {
    kvscopeVersion,
    ortVersion: ortVersion(),
    platform: `${process.platform}-${process.arch}`,
    executionProviders: await executionProviderStatuses(probe),
    defaultModel: { kind: 'synthetic' },
  };
}
