import type { StateCreator } from 'zustand/vanilla';
import { DEFAULT_QUANTIZED_CACHE_SETTINGS, type QuantizedCacheSettings } from '../../app/cache/cache-config.js';
import { type CacheMode, type DequantizePath, type ExecutionProviderName, type PromptFormat, type RunSettings, type SamplingSettings } from '../../app/engine/types.js';
import { parsePromptIds, promptIdsProblem, type PromptIdsProblem } from '../../app/engine/prompt-token-ids.js';
import type { RunFix } from '../../app/preflight/check-run.js';
import type { ModelSummary } from '../../app/protocol/workbench-api.js';
import type { WorkbenchState } from './workbench-state.js';

/** The run panel's fields: RunSettings without the model, which comes from the model panel. */
export interface RunForm {
  readonly cacheMode: CacheMode;
  readonly quantization: QuantizedCacheSettings;
  readonly executionProvider: ExecutionProviderName;
  readonly prompt: string;
  /**
   * `ids`: the prompt is `promptIds`, token ids fed as they are (RunSettings.promptTokenIds); a model
   * without a tokenizer always takes ids, whatever this says (promptTakesIds)
   */
  readonly promptInput: 'text' | 'ids';
  /** the ids as typed: `1, 15043, 727` (app/engine/prompt-token-ids.ts reads them) */
  readonly promptIds: string;
  /** `chat` applies only to a model that has a chat template (toRunSettings) */
  readonly promptFormat: PromptFormat;
  /** left-pad the encoded prompt to this many tokens (RunSettings.padPromptTo); null: no padding */
  readonly padPromptTo: number | null;
  readonly maxNewTokens: number;
  readonly sampling: SamplingSettings;
  readonly reference: boolean;
  /** quantized runs: where the cache is dequantized (DequantizePathField) */
  readonly dequantize: DequantizeChoice;
}

/**
 * Where the cache is dequantized, as the run panel offers it: `default` is no choice (`kvscope run`
 * without --dequantize: in the graph where the settings allow, else on the host, saying why); an
 * explicit `graph` is refused before Run when the graph cannot honour it, as the CLI refuses it.
 */
export type DequantizeChoice = 'default' | DequantizePath;

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
  promptInput: 'text',
  promptIds: '',
  promptFormat: 'text',
  padPromptTo: null,
  maxNewTokens: 128,
  sampling: { greedy: true, temperature: 0.8, topK: 40, topP: 0.95, seed: 42 },
  reference: true,
  dequantize: 'default',
};

export const DEFAULT_WHAT_IF: WhatIfForm = { contextLength: 4096, promptTokens: 32 };

export interface SettingsSlice {
  readonly form: RunForm;
  readonly whatIf: WhatIfForm;
  /** whether the what-if's lengths were typed (else they follow the open model) */
  readonly whatIfEdited: boolean;
  updateForm(patch: Partial<Omit<RunForm, 'quantization' | 'sampling'>>): void;
  /** the model open when the cache settings were last changed (null: transformers' defaults, untouched) */
  readonly quantizationEditedWith: string | null;
  updateQuantization(patch: Partial<QuantizedCacheSettings>): void;
  /** transformers' QuantizedCache defaults again (backend, bits, axes, group, residual, no extensions), and the default dequantize path */
  resetToTransformersDefaults(): void;
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
  quantizationEditedWith: null,
  updateQuantization: (patch) => set((state) => ({
    form: { ...state.form, quantization: { ...state.form.quantization, ...patch } },
    quantizationEditedWith: state.model.summary?.displayName ?? state.quantizationEditedWith,
  })),
  resetToTransformersDefaults: () => set((state) => ({
    form: { ...state.form, cacheMode: 'quantized', quantization: DEFAULT_QUANTIZED_CACHE_SETTINGS, dequantize: 'default' },
    quantizationEditedWith: null,
  })),
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

/** Whether the run's prompt is token ids: asked for, or the only way for a model without a tokenizer. */
export function promptTakesIds(form: Pick<RunForm, 'promptInput'>, summary: Pick<ModelSummary, 'hasTokenizer'> | null): boolean {
  return form.promptInput === 'ids' || summary?.hasTokenizer === false;
}

/**
 * Why the typed prompt ids cannot run (not a list of ids, empty, outside the model's vocabulary),
 * as the run panel says it next to the field; null when they can, or when the prompt is text.
 */
export function promptIdsFieldProblem(form: Pick<RunForm, 'promptInput' | 'promptIds'>, summary: Pick<ModelSummary, 'hasTokenizer' | 'vocabSize'> | null): PromptIdsProblem | null {
  if (!promptTakesIds(form, summary)) return null;
  const ids = parsePromptIds(form.promptIds);
  if (ids === null) {
    return { message: 'the prompt ids must be token ids (whole numbers from 0) separated by commas or spaces, such as 1, 15043, 727.', fix: 'Type the ids as the model\'s tokenizer gives them.' };
  }
  return promptIdsProblem(ids, summary?.vocabSize ?? null);
}

/**
 * The RunSettings a run starts with: the form plus the model argument and graph file. The chat
 * format is kept only for a model with a chat template (the choice stays in the form for the next one);
 * a prompt of ids (`promptAsIds`) goes as RunSettings.promptTokenIds, the text left empty.
 */
export function toRunSettings(form: RunForm, model: string, onnxFile: string | null, hasChatTemplate = false, promptAsIds = false): RunSettings {
  const ids = promptAsIds ? parsePromptIds(form.promptIds) ?? [] : null;
  return {
    model,
    ...(onnxFile !== null ? { onnxFile } : {}),
    executionProvider: form.executionProvider,
    cacheMode: form.cacheMode,
    quantization: form.quantization,
    prompt: ids === null ? form.prompt : '',
    ...(ids !== null ? { promptTokenIds: ids } : {}),
    ...(form.promptFormat === 'chat' && hasChatTemplate && ids === null ? { promptFormat: 'chat' as const } : {}),
    ...(form.padPromptTo !== null ? { padPromptTo: form.padPromptTo } : {}),
    maxNewTokens: form.maxNewTokens,
    sampling: form.sampling,
    reference: form.reference,
    // The default is sent as no choice, as `kvscope run` without --dequantize: where the graph cannot
    // express the settings the run goes host and its notes say why (an explicit graph is refused).
    ...(form.cacheMode === 'quantized' && form.dequantize !== 'default' ? { dequantize: form.dequantize } : {}),
  };
}

/** The backends' bit widths and axes (spec §3.1, §3.2), for the selects. */
export const BACKEND_CHOICES: Readonly<Record<'quanto' | 'hqq', { nbits: readonly number[]; axes: readonly number[] }>> = {
  quanto: { nbits: [2, 4], axes: [0, -1] },
  hqq: { nbits: [1, 2, 3, 4, 8], axes: [0, 1] },
};
