import { DEFAULT_QUANTIZED_CACHE_SETTINGS } from '../../app/cache/cache-config.js';
import type { ModelConfig } from '../../app/config/model-config.js';
import type { GenerationResult } from '../../app/engine/generation-result.js';
import type { RunSettings, StepMetrics } from '../../app/engine/types.js';
import { parsePromptIds } from '../../app/engine/prompt-token-ids.js';
import type { RunFix } from '../../app/preflight/check-run.js';
import type { Diagnostic } from '../../app/preflight/diagnostic.js';
import { runPreflight } from '../../app/preflight/run-preflight.js';
import type { RunErrorPayload } from '../../app/protocol/messages.js';
import type { ModelSource, RunExportFormat, WorkbenchApi, WorkbenchCommand } from '../../app/protocol/workbench-api.js';
import type { RunRecord } from '../../app/record/run-record.js';
import { downloadText } from '../platform/download.js';
import { fromRunError, fromThrown, type ErrorInfo } from '../store/error-info.js';
import { MAX_COMPARED, MIN_COMPARED } from '../store/history-slice.js';
import { modelArgument, sameSource } from '../store/model-slice.js';
import { exportableRunId, isRunActive } from '../store/run-slice.js';
import { promptIdsFieldProblem, promptTakesIds, toRunSettings } from '../store/settings-slice.js';
import type { WorkbenchStore } from '../store/workbench-store.js';
import { buffersForRecord, buffersForRun, type RunBuffers } from './live-buffers.js';

export interface ControllerOptions {
  /** the run check waits this long after the last edit (a check itself takes a few ms on the host) */
  readonly preflightDelayMs?: number;
  /** saves a download in the browser (tests replace it) */
  readonly download?: (fileName: string, mimeType: string, content: string) => void;
  /** the debounce timer (tests pass a manual one) */
  readonly timers?: { setTimeout(callback: () => void, delayMs: number): unknown; clearTimeout(handle: unknown): void };
}

const globalTimers = {
  setTimeout: (callback: () => void, delayMs: number): unknown => setTimeout(callback, delayMs),
  clearTimeout: (handle: unknown): void => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Everything the workbench does with the engine, framework-free: it calls the WorkbenchApi, writes
 * lifecycle state to the store, and streams metrics and text into buffers outside React (STYLE.md
 * §11). Components call its methods and select state; they never call the API themselves.
 */
export class WorkbenchController {
  readonly api: WorkbenchApi;
  readonly store: WorkbenchStore;
  readonly #preflightDelayMs: number;
  readonly #download: (fileName: string, mimeType: string, content: string) => void;
  readonly #disposers: (() => void)[] = [];
  #live: { readonly serial: number; readonly buffers: RunBuffers } | null = null;
  readonly #saved = new Map<string, RunBuffers>();
  readonly #timers: NonNullable<ControllerOptions['timers']>;
  #preflightTimer: unknown;
  #cancelRequested = false;
  #disposed = false;

  constructor(api: WorkbenchApi, store: WorkbenchStore, options: ControllerOptions = {}) {
    this.api = api;
    this.store = store;
    this.#preflightDelayMs = options.preflightDelayMs ?? 40;
    this.#download = options.download ?? downloadText;
    this.#timers = options.timers ?? globalTimers;
  }

  /** Loads the environment, opens its default model and the run history, and listens for menu commands. */
  async start(): Promise<void> {
    this.#disposers.push(this.api.onCommand((command) => void this.handleCommand(command)));
    this.#disposers.push(this.store.subscribe((state, previous) => {
      if (state.form !== previous.form || state.model.summary !== previous.model.summary) this.#schedulePreflight();
    }));
    const history = this.refreshHistory();
    try {
      const environment = await this.api.environment();
      this.store.getState().environmentLoaded(environment);
      const form = this.store.getState().form;
      const current = environment.executionProviders.find((ep) => ep.name === form.executionProvider);
      if (current !== undefined && !current.available) {
        const available = environment.executionProviders.find((ep) => ep.available);
        if (available !== undefined) this.store.getState().updateForm({ executionProvider: available.name });
      }
      await this.openModel(environment.defaultModel); // which loads the recent models too
    } catch (error) {
      const info = fromThrown(error, 'internal', 'Check that the kvscope host is running, then reload the window.');
      this.store.getState().environmentFailed(info);
      this.#notifyError('The workbench could not reach its engine', info);
      await this.#refreshRecent();
    }
    await history;
  }

  dispose(): void {
    this.#disposed = true;
    this.#timers.clearTimeout(this.#preflightTimer);
    for (const dispose of this.#disposers.splice(0)) dispose();
  }

  // ---- model -------------------------------------------------------------------------------

  async openModel(source: ModelSource, onnxFile?: string): Promise<void> {
    const state = this.store.getState();
    state.modelLoading(source);
    try {
      const summary = await this.api.openModel(source, onnxFile);
      if (!sameSource(this.store.getState().model.source, source)) return; // another model was asked for meanwhile
      this.store.getState().modelLoaded(summary, summary.config === null ? null : layerVerdict(summary.config));
      this.store.getState().fitWhatIfToModel(summary.config?.geometry.maxPositionEmbeddings ?? null);
    } catch (error) {
      const info = fromThrown(error, 'invalid-input', 'Choose a folder that holds config.json, an onnx/ graph and tokenizer.json.');
      this.store.getState().modelFailed(source, info);
    }
    await this.#refreshRecent();
  }

  /** The browser's path field (and a dropped file:// URI). */
  async openFolderPath(path: string): Promise<void> {
    const trimmed = path.trim();
    if (trimmed.length === 0) {
      this.store.getState().modelFailed({ kind: 'folder', path: '' }, {
        code: 'invalid-input', message: 'No folder path was given.', fix: 'Type the absolute path of a model folder (the one holding config.json).',
      });
      return;
    }
    await this.openModel({ kind: 'folder', path: trimmed });
  }

  /** Ctrl/Cmd+O: the native picker in Electron; the host's folder browser in the browser. */
  async openModelDialog(): Promise<void> {
    if (this.api.host !== 'electron') {
      this.store.getState().folderBrowserOpened();
      const listing = this.store.getState().folderBrowser.listing;
      await this.browseFolder(listing?.path ?? null);
      return;
    }
    try {
      const path = await this.api.pickModelFolder();
      if (path !== null) await this.openModel({ kind: 'folder', path });
    } catch (error) {
      this.#notifyError('The folder picker failed', fromThrown(error));
    }
  }

  /** Lists one of the host's folders in the model browser (null: the host's home). */
  async browseFolder(path: string | null): Promise<void> {
    this.store.getState().folderBrowserLoading();
    try {
      this.store.getState().folderListed(await this.api.listFolder(path));
    } catch (error) {
      this.store.getState().folderListingFailed(fromThrown(error, 'invalid-input', 'Choose another folder.'));
    }
  }

  /** The next page of a huge folder (the host lists 2,000 entries a page), added below those shown. */
  async browseMoreOfFolder(): Promise<void> {
    const listing = this.store.getState().folderBrowser.listing;
    if (listing === null || !listing.truncated) return;
    this.store.getState().folderBrowserLoading();
    try {
      this.store.getState().folderListed(await this.api.listFolder(listing.path, listing.offset + listing.entries.length));
    } catch (error) {
      this.store.getState().folderListingFailed(fromThrown(error, 'invalid-input', 'Choose another folder.'));
    }
  }

  closeFolderBrowser(): void {
    this.store.getState().folderBrowserClosed();
  }

  /** A model folder, its config.json or an .onnx file picked in the browser: opened as the path field would open it. */
  async openBrowsedPath(path: string): Promise<void> {
    this.store.getState().folderBrowserClosed();
    this.store.getState().setModelPathDraft(path);
    await this.openFolderPath(path);
  }

  async selectOnnxFile(onnxFile: string): Promise<void> {
    const source = this.store.getState().model.source;
    if (source !== null) await this.openModel(source, onnxFile);
  }

  // ---- runs --------------------------------------------------------------------------------

  /** The live run's buffers, when `serial` names the live run. */
  liveBuffers(serial: number): RunBuffers | null {
    return this.#live !== null && this.#live.serial === serial ? this.#live.buffers : null;
  }

  async startRun(): Promise<void> {
    const state = this.store.getState();
    if (isRunActive(state.run.status)) return;
    const summary = state.model.summary;
    if (state.model.status !== 'ready' || summary === null || state.model.source === null) {
      this.#notifyError('No model to run', { code: 'invalid-input', message: 'Open a model before starting a run.', fix: 'Pick a synthetic model or open a model folder.' });
      return;
    }
    if (!summary.ok) {
      const first = summary.diagnostics.find((d) => d.severity === 'error');
      this.#notifyError('This model cannot run', {
        code: first?.code ?? 'invalid-input',
        message: first?.message ?? 'The model checks found errors.',
        ...(first?.fix !== undefined ? { fix: first.fix } : {}),
      });
      return;
    }
    const idsProblem = promptIdsFieldProblem(state.form, summary);
    if (idsProblem !== null) {
      this.#notifyError('The prompt ids cannot run', { code: 'invalid-input', message: idsProblem.message, fix: idsProblem.fix });
      return;
    }
    const settings = toRunSettings(state.form, modelArgument(state.model.source), summary.onnxFile, summary.chatTemplate !== null, promptTakesIds(state.form, summary));
    // Never start what the check refuses: a shortcut may come before the check of the last edit did.
    const refusal = await this.#refusalFor(settings);
    if (refusal !== null) {
      this.#notifyError('This run is refused', refusal);
      return;
    }
    if (isRunActive(this.store.getState().run.status)) return;
    const serial = this.store.getState().runStarting(settings);
    const buffers = buffersForRun(settings, summary);
    this.#live = { serial, buffers };
    this.#cancelRequested = false;
    this.store.getState().setView('live');

    let streaming = false;
    const markStreaming = (): void => {
      if (streaming) return;
      streaming = true;
      this.store.getState().runStreaming(serial);
    };
    const isCurrent = (): boolean => this.#live?.serial === serial;
    try {
      const ticket = await this.api.startRun(settings, {
        onText: (delta: string, tokenIds: readonly number[]) => {
          if (!isCurrent()) return;
          buffers.text.append(delta, tokenIds);
          markStreaming();
        },
        onMetrics: (steps: readonly StepMetrics[]) => {
          if (!isCurrent()) return;
          buffers.metrics.append(steps);
          markStreaming();
        },
        onDone: (result: GenerationResult, savedRunId: string | null) => {
          this.store.getState().runFinished(serial, result, savedRunId);
          void this.refreshHistory();
        },
        onError: (error: RunErrorPayload) => {
          this.store.getState().runFailed(serial, fromRunError(error));
        },
      });
      this.store.getState().runStarted(serial, ticket.runId);
      if (this.#cancelRequested && isRunActive(this.store.getState().run.status)) await this.api.cancelRun(ticket.runId);
    } catch (error) {
      this.store.getState().runFailed(serial, fromThrown(error, 'internal', 'Check the settings and try again; if it keeps failing, restart kvscope.'));
    }
  }

  /** Esc: asks the engine to stop at the next step; the run then ends as `cancelled`. */
  async cancelRun(): Promise<void> {
    const run = this.store.getState().run;
    if (!isRunActive(run.status)) return;
    this.store.getState().runCancelling(run.serial);
    if (run.runId === null) {
      this.#cancelRequested = true; // the ticket has not arrived yet; cancel when it does
      return;
    }
    try {
      await this.api.cancelRun(run.runId);
    } catch (error) {
      this.#notifyError('The run could not be cancelled', fromThrown(error));
    }
  }

  // ---- history -----------------------------------------------------------------------------

  async refreshHistory(): Promise<void> {
    this.store.getState().historyLoading();
    try {
      this.store.getState().historyLoaded(await this.api.listRuns());
    } catch (error) {
      this.store.getState().historyFailed(fromThrown(error));
    }
  }

  async openSavedRun(runId: string): Promise<void> {
    this.store.getState().savedRunLoading(runId);
    try {
      const record = await this.api.loadRun(runId);
      this.store.getState().savedRunLoaded(record);
    } catch (error) {
      this.store.getState().savedRunFailed(runId, fromThrown(error, 'invalid-input', 'The record may be from a newer kvscope or damaged; delete it or open it with the version that wrote it.'));
    }
  }

  /** A saved run's buffers (built once from its record). */
  savedBuffers(record: RunRecord): RunBuffers {
    let buffers = this.#saved.get(record.id);
    if (buffers === undefined) {
      buffers = buffersForRecord(record);
      this.#saved.set(record.id, buffers);
    }
    return buffers;
  }

  async compareRuns(): Promise<void> {
    const ids = this.store.getState().compare.runIds;
    if (ids.length < MIN_COMPARED || ids.length > MAX_COMPARED) {
      this.#notifyError('Pick 2 to 8 runs', { code: 'invalid-input', message: `Comparing needs ${MIN_COMPARED} to ${MAX_COMPARED} runs; ${ids.length} are ticked.`, fix: 'Tick 2 to 8 runs in the history list, then press Compare.' });
      return;
    }
    this.store.getState().compareLoading();
    try {
      this.store.getState().compareLoaded(await Promise.all(ids.map((id) => this.api.loadRun(id))));
    } catch (error) {
      this.store.getState().compareFailed(fromThrown(error));
    }
  }

  async deleteRun(runId: string): Promise<void> {
    try {
      await this.api.deleteRun(runId);
      this.#saved.delete(runId);
      this.store.getState().runDeleted(runId);
      this.store.getState().pushNotice({ tone: 'info', title: `Deleted run ${runId}` });
    } catch (error) {
      this.#notifyError('The run could not be deleted', fromThrown(error));
    }
    await this.refreshHistory();
  }

  /** `raw`: a damaged record's file as it is (History's damaged entries). */
  async exportRun(runId: string, format: RunExportFormat): Promise<void> {
    const title = format === 'raw' ? 'Exported the file' : `Exported ${format.toUpperCase()}`;
    try {
      const exported = await this.api.exportRun(runId, format);
      if (exported.saved !== null) {
        this.store.getState().pushNotice({ tone: 'success', title, text: `Saved to ${exported.saved}` });
        return;
      }
      if (this.api.host === 'electron') return; // the save dialog was cancelled
      this.#download(exported.fileName, exported.mimeType, exported.content);
      this.store.getState().pushNotice({ tone: 'success', title, text: `Downloaded ${exported.fileName}` });
    } catch (error) {
      this.#notifyError('The export failed', fromThrown(error));
    }
  }

  /**
   * Saves text the workbench made (a layer map from the run panel) through the browser's download,
   * the way serve mode saves every export, with a notice naming the file.
   */
  saveText(fileName: string, mimeType: string, content: string, title: string): void {
    try {
      this.#download(fileName, mimeType, content);
      this.store.getState().pushNotice({ tone: 'success', title, text: `Downloaded ${fileName}` });
    } catch (error) {
      this.#notifyError('The export failed', fromThrown(error));
    }
  }

  /**
   * The menu's Export: the saved run on screen, else the live run once it finished (saved, or kept
   * by the host for the session when its data folder could not be written).
   */
  async exportCurrent(format: 'json' | 'csv'): Promise<void> {
    const state = this.store.getState();
    const runId = state.view === 'saved' ? state.savedRun.runId : exportableRunId(state.run);
    if (runId === null) {
      this.#notifyError('Nothing to export', { code: 'invalid-input', message: 'No saved run is on screen.', fix: 'Finish a run, or open one from the history, then export it.' });
      return;
    }
    await this.exportRun(runId, format);
  }

  // ---- commands ----------------------------------------------------------------------------

  /** Menu commands (Electron) and the keyboard shortcuts both land here. */
  async handleCommand(command: WorkbenchCommand): Promise<void> {
    if (this.#disposed) return;
    switch (command.type) {
      case 'open-model': return this.openModelDialog();
      case 'open-recent': return this.openModel(command.source);
      case 'model-dropped': return this.openModel({ kind: 'folder', path: command.path });
      case 'run': return this.startRun();
      case 'stop': return this.cancelRun();
      case 'export': return this.exportCurrent(command.format);
      default: {
        const unknown: never = command;
        this.#notifyError('Unknown command', { code: 'protocol', message: `The host sent a command this window does not know: ${JSON.stringify(unknown)}.`, fix: 'Restart kvscope so that the window and the host are the same version.' });
      }
    }
  }

  // ---- internals ---------------------------------------------------------------------------

  #notifyError(title: string, error: ErrorInfo): void {
    this.store.getState().pushNotice({ tone: 'error', title, error });
  }

  async #refreshRecent(): Promise<void> {
    try {
      this.store.getState().recentModelsLoaded(await this.api.recentModels());
    } catch {
      // Recents are a convenience: a failure leaves the list as it was.
    }
  }

  /** One of the run check's fixes, clicked: the form changes as it says, and the check runs again. */
  applyFix(fix: RunFix): void {
    this.store.getState().applyFix(fix);
  }

  /**
   * The run check on every edit, debounced: the host tokenizes the prompt as the run would and
   * checks the preflight and every flush the run reaches (app/preflight/check-run.ts).
   */
  #schedulePreflight(): void {
    const state = this.store.getState();
    const settings = this.#settingsOnScreen();
    const key = JSON.stringify(settings);
    // an update that leaves the settings as they are (the same value set twice, a field outside them)
    // must leave a pending check pending: cancelling its timer here left "checking…" on screen for good
    if (state.preflight.key === key) return;
    this.#timers.clearTimeout(this.#preflightTimer);
    state.preflightChecking(key);
    this.#preflightTimer = this.#timers.setTimeout(() => void this.#runCheck(key, settings), this.#preflightDelayMs);
  }

  async #runCheck(key: string, settings: RunSettings | null): Promise<void> {
    if (this.#disposed) return;
    if (settings === null) {
      this.store.getState().preflightDone(key, null);
      return;
    }
    try {
      const check = await this.api.checkRun(settings);
      this.store.getState().preflightDone(key, check);
    } catch (error) {
      this.store.getState().preflightFailed(key, fromThrown(error, 'invalid-input', 'Check that the kvscope host is still running, then edit a setting to check again.'));
    }
  }

  /** The settings Run would start with now; null without an openable model. */
  #settingsOnScreen(): RunSettings | null {
    const state = this.store.getState();
    const summary = state.model.summary;
    if (summary === null || !summary.ok || summary.config === null || state.model.source === null) return null;
    // text that is not a list of ids is said under its field; ids (empty or outside the vocabulary too)
    // go to the host's check, which refuses them in the run's own words (app/engine/prompt-token-ids.ts)
    if (promptTakesIds(state.form, summary) && parsePromptIds(state.form.promptIds) === null) return null;
    return toRunSettings(state.form, modelArgument(summary.source), summary.onnxFile, summary.chatTemplate !== null, promptTakesIds(state.form, summary));
  }

  /** Why these settings may not run, from the check on screen when it is theirs, else asked now. */
  async #refusalFor(settings: RunSettings): Promise<ErrorInfo | null> {
    const preflight = this.store.getState().preflight;
    let check = preflight.checkedKey === JSON.stringify(settings) ? preflight.check : null;
    if (check === null) {
      try {
        check = await this.api.checkRun(settings);
      } catch {
        return null; // the run itself says what is wrong
      }
    }
    if (check.refusal === null) return null;
    return { code: 'refused', message: check.refusal.message, ...(check.refusal.fix !== undefined ? { fix: check.refusal.fix } : {}) };
  }
}

/** transformers' own verdict on the layer types (policy `all`), whatever the form's policy is. */
export function layerVerdict(config: ModelConfig): Diagnostic | null {
  try {
    const result = runPreflight(config, { ...DEFAULT_QUANTIZED_CACHE_SETTINGS, layerPolicy: 'all' });
    return result.diagnostics.find((d) => d.code === 'unsupported-layer-types') ?? null;
  } catch {
    return null;
  }
}
