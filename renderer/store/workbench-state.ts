import type { EnvironmentSlice } from './environment-slice.js';
import type { FolderBrowserSlice } from './folder-browser-slice.js';
import type { HistorySlice } from './history-slice.js';
import type { LabSlice } from './lab-slice.js';
import type { ModelSlice } from './model-slice.js';
import type { NoticeSlice } from './notice-slice.js';
import type { PreflightSlice } from './preflight-slice.js';
import type { RunSlice } from './run-slice.js';
import type { SettingsSlice } from './settings-slice.js';

/** The one store's state: every slice together (zustand's slices pattern). */
export type WorkbenchState = EnvironmentSlice & ModelSlice & SettingsSlice & PreflightSlice & RunSlice & HistorySlice & NoticeSlice & FolderBrowserSlice & LabSlice;
