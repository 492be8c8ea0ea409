import type { StateCreator } from 'zustand/vanilla';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../../app/cache/cache-config.js';
import type { CacheMode, ExecutionProviderName, PromptFormat, RunSettings, SamplingSettings } from '../../app/engine/types.js';
import type { RunFix } from '../../app/preflight/check-run.js';
import type { WorkbenchState } from './workbench-state.js';

/** The run panel's fields: RunSettings without the model, which comes from the model panel. */
export interface RunForm {
  readonly cacheMode: CacheMode;
  readonly quantization: QuantizedCacheSettings;
  readonly executionProvider: ExecutionProviderName;
  readonly prompt: string;
  /** `chat` applies only to a model that has a chat template (toRunSettings) */
  readonly promptFormat: PromptFormat;
  /** left-pad the encoded prompt to this many tokens (RunSettings.padPromptTo); null: no padding */
  readonly padPromptTo: number | null;
  readonly maxNewTokens: number;
  readonly sampling: SamplingSettings;
  readonly reference: boolean;
}

/** The memory what-if's inputs. */
export interface WhatIfForm {
  readonly contextLength: number;
  readonly promptTokens: number;
}

export const DEFAULT_RUN_FORM: RunForm = {
  cacheMode: 'quantized',
  quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS,
  executionProvider: 'cpu',
  prompt: 'Once upon a time',
  promptFormat: 'text',
  padPromptTo: null,
  maxNewTokens: 128,
  sampling: { greedy: true, temperature: 0.8, topK: 40, topP: 0.95, seed: 42 },
  reference: true,
};

export const DEFAULT_WHAT_IF: WhatIfForm = { contextLength: 4096, promptTokens: 32 };

export interface SettingsSlice {
  readonly form: RunForm;
  readonly whatIf: WhatIfForm;
  /** whether the what-if's lengths were typed (else they follow the open model) */
  readonly whatIfEdited: boolean;
  updateForm(patch: Partial<Omit<RunForm, 'quantization' | 'sampling'>>): void;
  updateQuantization(patch: Partial<QuantizedCacheSettings>): void;
  updateSampling(patch: Partial<SamplingSettings>): void;
  updateWhatIf(patch: Partial<WhatIfForm>): void;
  /**
   * The what-if's default context for a newly opened model: its max_position_embeddings when that is
   * shorter than the default (asking 4,096 tokens of a 512-position model only earns a warning).
   * Lengths the user typed are kept.
   */
  fitWhatIfToModel(maxPositions: number | null): void;
  /** the hybrid-model choices of the model panel, in one step */
  chooseLayerHandling(choice: LayerHandling): void;
  /** one of the run check's fixes, as clicked: only the fields it names change */
  applyFix(fix: RunFix): void;
}

/** What to do with a model transformers' QuantizedCache refuses (product research §2 item 3). */
export type LayerHandling = 'refuse' | 'full-attention-only' | 'dynamic';

export function layerHandlingOf(form: RunForm): LayerHandling {
  if (form.cacheMode === 'dynamic') return 'dynamic';
  return form.quantization.layerPolicy === 'full-attention-only' ? 'full-attention-only' : 'refuse';
}

export const createSettingsSlice: StateCreator<WorkbenchState, [], [], SettingsSlice> = (set) => ({
  form: DEFAULT_RUN_FORM,
  whatIf: DEFAULT_WHAT_IF,
  whatIfEdited: false,
  updateForm: (patch) => set((state) => ({ form: { ...state.form, ...patch } })),
  updateQuantization: (patch) => set((state) => ({ form: { ...state.form, quantization: { ...state.form.quantization, ...patch } } })),
  updateSampling: (patch) => set((state) => ({ form: { ...state.form, sampling: { ...state.form.sampling, ...patch } } })),
  updateWhatIf: (patch) => set((state) => ({ whatIf: { ...state.whatIf, ...patch }, whatIfEdited: true })),
  fitWhatIfToModel: (maxPositions) => set((state) => {
    if (state.whatIfEdited) return {};
    const contextLength = maxPositions !== null && maxPositions > 0 ? Math.min(DEFAULT_WHAT_IF.contextLength, maxPositions) : DEFAULT_WHAT_IF.contextLength;
    return { whatIf: { contextLength, promptTokens: Math.min(DEFAULT_WHAT_IF.promptTokens, contextLength) } };
  }),
  chooseLayerHandling: (choice) => set((state) => {
    const form = state.form;
    if (choice === 'dynamic') return { form: { ...form, cacheMode: 'dynamic' } };
    const layerPolicy = choice === 'full-attention-only' ? 'full-attention-only' : 'all';
    return { form: { ...form, cacheMode: 'quantized', quantization: { ...form.quantization, layerPolicy } } };
  }),
  applyFix: (fix) => set((state) => ({
    form: {
      ...state.form,
      quantization: { ...state.form.quantization, ...fix.quantization },
      ...(fix.padPromptTo !== undefined ? { padPromptTo: fix.padPromptTo } : {}),
      ...(fix.maxNewTokens !== undefined ? { maxNewTokens: fix.maxNewTokens } : {}),
    },
  })),
});

/**
 * The RunSettings a run starts with: the form plus the model argument and graph file. The chat
 * format is kept only for a model with a chat template (the choice stays in the form for the next one).
 */
export function toRunSettings(form: RunForm, model: string, onnxFile: string | null, hasChatTemplate = false): RunSettings {
  return {
    model,
    ...(onnxFile !== null ? { onnxFile } : {}),
    executionProvider: form.executionProvider,
    cacheMode: form.cacheMode,
    quantization: form.quantization,
    prompt: form.prompt,
    ...(form.promptFormat === 'chat' && hasChatTemplate ? { promptFormat: 'chat' as const } : {}),
    ...(form.padPromptTo !== null ? { padPromptTo: form.padPromptTo } : {}),
    maxNewTokens: form.maxNewTokens,
    sampling: form.sampling,
    reference: form.reference,
  };
}

/** The backends' bit widths and axes (spec §3.1, §3.2), for the selects. */
export const BACKEND_CHOICES: Readonly<Record<'quanto' | 'hqq', { nbits: readonly number[]; axes: readonly number[] }>> = {
  quanto: { nbits: [2, 4], axes: [0, -1] },
  hqq: { nbits: [1, 2, 3, 4, 8], axes: [0, 1] },
};
