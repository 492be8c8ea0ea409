import type { StateCreator } from 'zustand/vanilla';
import type { ErrorInfo } from './error-info.js';
import type { WorkbenchState } from './workbench-state.js';

export interface Notice {
  readonly id: number;
  readonly tone: 'error' | 'info' | 'success';
  readonly title: string;
  readonly text?: string;
  readonly error?: ErrorInfo;
}

export interface NoticeSlice {
  readonly notices: readonly Notice[];
  pushNotice(notice: Omit<Notice, 'id'>): number;
  dismissNotice(id: number): void;
  /** the control a command asked to focus (Ctrl+O in the browser focuses the path field) */
  readonly focusRequest: { readonly target: 'model-path' | 'prompt'; readonly nonce: number } | null;
  requestFocus(target: 'model-path' | 'prompt'): void;
}

/** Notices kept at most; the oldest go first. */
export const MAX_NOTICES = 4;

export const createNoticeSlice: StateCreator<WorkbenchState, [], [], NoticeSlice> = (set, get) => {
  let nextId = 1;
  return {
    notices: [],
    pushNotice: (notice) => {
      const id = nextId++;
      set({ notices: [...get().notices, { ...notice, id }].slice(-MAX_NOTICES) });
      return id;
    },
    dismissNotice: (id) => set({ notices: get().notices.filter((notice) => notice.id !== id) }),
    focusRequest: null,
    requestFocus: (target) => set({ focusRequest: { target, nonce: (get().focusRequest?.nonce ?? 0) + 1 } }),
  };
};
