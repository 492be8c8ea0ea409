import type { StateCreator } from 'zustand/vanilla';
import type { FolderListing } from '../../app/protocol/workbench-api.js';
import type { ErrorInfo } from './error-info.js';
import type { WorkbenchState } from './workbench-state.js';

/** The browser's model picker: folders of the host, listed by the host (serve mode has no native dialog). */
export interface FolderBrowserState {
  readonly open: boolean;
  readonly loading: boolean;
  /** the folder on screen (kept while the next one loads) */
  readonly listing: FolderListing | null;
  /** the host refused the last folder asked for (it does not exist, permission denied) */
  readonly error: ErrorInfo | null;
}

export interface FolderBrowserSlice {
  readonly folderBrowser: FolderBrowserState;
  folderBrowserOpened(): void;
  folderBrowserLoading(): void;
  folderListed(listing: FolderListing): void;
  folderListingFailed(error: ErrorInfo): void;
  folderBrowserClosed(): void;
}

export const INITIAL_FOLDER_BROWSER: FolderBrowserState = { open: false, loading: false, listing: null, error: null };

export const createFolderBrowserSlice: StateCreator<WorkbenchState, [], [], FolderBrowserSlice> = (set) => ({
  folderBrowser: INITIAL_FOLDER_BROWSER,
  folderBrowserOpened: () => set((state) => ({ folderBrowser: { ...state.folderBrowser, open: true, error: null } })),
  folderBrowserLoading: () => set((state) => ({ folderBrowser: { ...state.folderBrowser, loading: true } })),
  folderListed: (listing) => set((state) => ({ folderBrowser: { ...state.folderBrowser, loading: false, listing: merged(state.folderBrowser.listing, listing), error: null } })),
  folderListingFailed: (error) => set((state) => ({ folderBrowser: { ...state.folderBrowser, loading: false, error } })),
  folderBrowserClosed: () => set((state) => ({ folderBrowser: { ...state.folderBrowser, open: false, loading: false } })),
});

/** A later page of the folder on screen joins the entries already listed; any other listing replaces them. */
function merged(shown: FolderListing | null, page: FolderListing): FolderListing {
  if (shown === null || page.offset === 0 || shown.path !== page.path || shown.offset + shown.entries.length !== page.offset) return page;
  return { ...page, offset: shown.offset, entries: [...shown.entries, ...page.entries] };
}
