import { EXECUTION_PROVIDERS } from '../../engine/types.js';
import type { WorkbenchEnvironment } from '../../protocol/workbench-api.js';
import { ensureExecutionProvider, ortVersion } from '../ort/execution-providers.js';

/**
 * What the workbench runs on. Each execution provider is asked the same question a run asks
 * (ensureExecutionProvider), so an unavailable one carries the run's own message and fix.
 */
export function workbenchEnvironment(kvscopeVersion: string): WorkbenchEnvironment {
  return {
    kvscopeVersion,
    ortVersion: ortVersion(),
    platform: `${process.platform}-${process.arch}`,
    executionProviders: EXECUTION_PROVIDERS.map((name) => {
      try {
        ensureExecutionProvider(name);
        return { name, available: true };
      } catch (error) {
        const fix = (error as { fix?: unknown }).fix;
        return { name, available: false, reason: `${(error as Error).message}${typeof fix === 'string' ? ` ${fix}` : ''}` };
      }
    }),
    defaultModel: { kind: 'synthetic' },
  };
}
