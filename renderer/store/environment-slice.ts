import type { StateCreator } from 'zustand/vanilla';
import type { WorkbenchEnvironment } from '../../app/protocol/workbench-api.js';
import type { ErrorInfo } from './error-info.js';
import type { WorkbenchState } from './workbench-state.js';

export interface EnvironmentSlice {
  readonly host: 'electron' | 'browser';
  readonly environment: WorkbenchEnvironment | null;
  readonly environmentError: ErrorInfo | null;
  environmentLoaded(environment: WorkbenchEnvironment): void;
  environmentFailed(error: ErrorInfo): void;
}

export const createEnvironmentSlice = (host: 'electron' | 'browser'): StateCreator<WorkbenchState, [], [], EnvironmentSlice> => (set) => ({
  host,
  environment: null,
  environmentError: null,
  environmentLoaded: (environment) => set({ environment, environmentError: null }),
  environmentFailed: (environmentError) => set({ environmentError }),
});
