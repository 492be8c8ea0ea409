import { createStore, type StoreApi } from 'zustand/vanilla';
import { createEnvironmentSlice } from './environment-slice.js';
import { createFolderBrowserSlice } from './folder-browser-slice.js';
import { createHistorySlice } from './history-slice.js';
import { createLabSlice } from './lab-slice.js';
import { createModelSlice } from './model-slice.js';
import { createNoticeSlice } from './notice-slice.js';
import { createPreflightSlice } from './preflight-slice.js';
import { createRunSlice } from './run-slice.js';
import { createSettingsSlice } from './settings-slice.js';
import type { WorkbenchState } from './workbench-state.js';

export type { WorkbenchState } from './workbench-state.js';
export type WorkbenchStore = StoreApi<WorkbenchState>;

/**
 * The renderer's one store (STYLE.md §11): a framework-free zustand store built from typed slices,
 * bound to React with `useStore` (renderer/store/use-workbench.ts). The API client and the controller
 * write to it without React; high-frequency metrics never go through it.
 */
export function createWorkbenchStore(host: 'electron' | 'browser'): WorkbenchStore {
  return createStore<WorkbenchState>()((...a) => ({
    ...createEnvironmentSlice(host)(...a),
    ...createModelSlice(...a),
    ...createSettingsSlice(...a),
    ...createPreflightSlice(...a),
    ...createRunSlice(...a),
    ...createHistorySlice(...a),
    ...createNoticeSlice(...a),
    ...createFolderBrowserSlice(...a),
    ...createLabSlice(...a),
  }));
}
