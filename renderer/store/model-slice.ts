import { sameModelSource } from '../../app/protocol/model-source.js';
import type { StateCreator } from 'zustand/vanilla';
import type { Diagnostic } from '../../app/preflight/diagnostic.js';
import type { ModelSource, ModelSummary } from '../../app/protocol/workbench-api.js';
import type { ErrorInfo } from './error-info.js';
import type { WorkbenchState } from './workbench-state.js';

export type LoadStatus = 'idle' | 'loading' | 'ready' | 'error';

export interface ModelState {
  readonly status: LoadStatus;
  readonly source: ModelSource | null;
  readonly summary: ModelSummary | null;
  /** the API call failed (not a bad model: those come back as summary diagnostics) */
  readonly error: ErrorInfo | null;
  /**
   * transformers' verdict on the model's layer types under its own policy (`all`), computed with the
   * pure preflight when the model opens: shown before any run, whatever policy the form holds.
   */
  readonly layerVerdict: Diagnostic | null;
}

export interface ModelSlice {
  readonly model: ModelState;
  readonly recentModels: readonly ModelSource[];
  /** the browser's folder-path field */
  readonly modelPathDraft: string;
  modelLoading(source: ModelSource): void;
  modelLoaded(summary: ModelSummary, layerVerdict: Diagnostic | null): void;
  modelFailed(source: ModelSource, error: ErrorInfo): void;
  recentModelsLoaded(recent: readonly ModelSource[]): void;
  setModelPathDraft(path: string): void;
}

export const INITIAL_MODEL: ModelState = { status: 'idle', source: null, summary: null, error: null, layerVerdict: null };

export const createModelSlice: StateCreator<WorkbenchState, [], [], ModelSlice> = (set) => ({
  model: INITIAL_MODEL,
  recentModels: [],
  modelPathDraft: '',
  // The previous summary stays visible while the next model loads; it is replaced, not cleared.
  modelLoading: (source) => set((state) => ({ model: { ...state.model, status: 'loading', source, error: null } })),
  modelLoaded: (summary, layerVerdict) => set((state) => ({
    model: { status: 'ready', source: summary.source, summary, error: null, layerVerdict },
    modelPathDraft: summary.source.kind === 'folder' ? summary.source.path : state.modelPathDraft,
  })),
  modelFailed: (source, error) => set((state) => ({ model: { ...state.model, status: 'error', source, error } })),
  recentModelsLoaded: (recentModels) => set({ recentModels }),
  setModelPathDraft: (modelPathDraft) => set({ modelPathDraft }),
});

export { modelArgument } from '../../app/protocol/model-source.js';

export function sourceLabel(source: ModelSource): string {
  if (source.kind === 'folder') return source.path;
  return source.kind === 'synthetic' ? 'synthetic (embedded Llama)' : 'synthetic-hybrid (sliding + full attention)';
}

export function sameSource(a: ModelSource | null, b: ModelSource | null): boolean {
  return a === null || b === null ? a === b : sameModelSource(a, b);
}
