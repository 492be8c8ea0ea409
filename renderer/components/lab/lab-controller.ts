import type { LabApi } from '../../../app/lab/lab-api.js';
import type { WorkbenchApi } from '../../../app/protocol/workbench-api.js';
import { downloadText, downloadUrl } from '../../platform/download.js';
import { fromRunError, fromThrown } from '../../store/error-info.js';
import { modelArgument } from '../../store/model-slice.js';
import type { WorkbenchStore } from '../../store/workbench-store.js';
import { labSweepSpec } from '../../../app/lab/lab-sweep-spec.js';
import { labSweepSettings } from './lab-spec.js';

/**
 * What the Lab view does with the engine, framework-free (like renderer/controller's): it calls the
 * WorkbenchApi's `lab`, writes the lab slice, and keeps a sweep's points arriving into the table and
 * the charts. Components call its methods and select state.
 */
export class LabController {
  readonly #api: WorkbenchApi;
  readonly #store: WorkbenchStore;
  readonly #download: (fileName: string, mimeType: string, content: string) => void;

  constructor(api: WorkbenchApi, store: WorkbenchStore, download = downloadText) {
    this.#api = api;
    this.#store = store;
    this.#download = download;
  }

  get available(): boolean {
    return this.#api.lab !== undefined;
  }

  /** Starts a sweep from the setup form and the run panel's fields, on the open model. */
  async start(): Promise<void> {
    const lab = this.#lab();
    const state = this.#store.getState();
    const source = state.model.source;
    if (lab === null || source === null) return;
    // The page sends typed settings; the host makes the sweep's spec from them with the function the preview used.
    const { settings, problems: listProblems } = labSweepSettings(state.lab.setup, state.form, modelArgument(source));
    const { spec, problems: sweepProblems } = labSweepSpec(settings);
    const problems = [...listProblems, ...sweepProblems];
    if (problems.length > 0) {
      state.labSweepFailed({ code: 'invalid-input', message: problems.join(' '), fix: 'Correct the values to sweep.' });
      return;
    }
    const name = state.lab.setup.name.trim() || defaultName(spec.grid, state.lab.setup.preset);
    state.labSweepStarting(name, spec);
    try {
      const ticket = await lab.startSweep({ kind: 'new', name, settings, jobs: state.lab.setup.jobs }, this.#handlers());
      this.#started(ticket.sweepId, ticket.points);
      void this.refreshHistory();
    } catch (error) {
      this.#store.getState().labSweepFailed(fromThrown(error, 'invalid-input'));
    }
  }

  /** Runs the rest of the shown sweep (points already complete are kept). */
  async resume(): Promise<void> {
    const lab = this.#lab();
    const { sweep, setup } = this.#store.getState().lab;
    if (lab === null || sweep.sweepId === null) return;
    this.#store.getState().labSweepStarting(sweep.name, null);
    try {
      const ticket = await lab.startSweep({ kind: 'resume', sweepId: sweep.sweepId, jobs: setup.jobs }, this.#handlers());
      this.#started(ticket.sweepId, ticket.points);
    } catch (error) {
      this.#store.getState().labSweepFailed(fromThrown(error, 'invalid-input'));
    }
  }

  /**
   * Stops the running sweep. Clicked before the host has answered the start (a new sweep's model is
   * still being read), the stop is remembered and sent when the answer comes (#started): the host
   * has no running sweep to stop before then, and the stop was lost.
   */
  async stop(): Promise<void> {
    const lab = this.#lab();
    const { sweepId, status } = this.#store.getState().lab.sweep;
    if (lab === null) return;
    if (status === 'starting') {
      this.#store.getState().labSweepStopping();
      return;
    }
    if (sweepId === null) return;
    this.#store.getState().labSweepStopping();
    await this.#cancel(lab, sweepId);
  }

  /** The sweep's id has come back: it runs, or stops at once if Stop was clicked while it started. */
  #started(sweepId: string, points: number): void {
    const stopping = this.#store.getState().lab.sweep.status === 'stopping';
    this.#store.getState().labSweepStarted(sweepId, points);
    const lab = this.#lab();
    if (stopping && lab !== null) void this.#cancel(lab, sweepId);
  }

  async #cancel(lab: LabApi, sweepId: string): Promise<void> {
    try {
      await lab.cancelSweep(sweepId);
    } catch (error) {
      this.#store.getState().labSweepFailed(fromThrown(error));
    }
  }

  async refreshHistory(): Promise<void> {
    const lab = this.#lab();
    if (lab === null) return;
    this.#store.getState().labHistoryLoading();
    try {
      this.#store.getState().labHistoryLoaded(await lab.listSweeps());
    } catch (error) {
      this.#store.getState().labHistoryFailed(fromThrown(error));
    }
  }

  async openSweep(sweepId: string): Promise<void> {
    const lab = this.#lab();
    if (lab === null) return;
    try {
      const view = await lab.loadSweep(sweepId);
      this.#store.getState().labSweepOpened(sweepId, view.summary.name, view.spec, view.points, view.results.rows, view.summary.status === 'complete');
    } catch (error) {
      this.#store.getState().labSweepFailed(fromThrown(error));
    }
  }

  /** Opens a point's record in the detail panel. */
  async openPoint(name: string): Promise<void> {
    const lab = this.#lab();
    const sweepId = this.#store.getState().lab.sweep.sweepId;
    if (lab === null || sweepId === null) return;
    this.#store.getState().labPointOpening(name);
    try {
      this.#store.getState().labPointOpened(name, await lab.loadPoint(sweepId, name));
    } catch (error) {
      this.#store.getState().labPointFailed(name, fromThrown(error));
    }
  }

  /** Ticks a point for the comparison and loads its record (per-window figures) when needed. */
  async toggleCompare(name: string): Promise<void> {
    const lab = this.#lab();
    const state = this.#store.getState();
    state.toggleLabCompare(name);
    const sweepId = state.lab.sweep.sweepId;
    if (lab === null || sweepId === null || state.lab.records[name] !== undefined || !this.#store.getState().lab.compared.includes(name)) return;
    try {
      this.#store.getState().labRecordLoaded(name, await lab.loadPoint(sweepId, name));
    } catch {
      // a refused point has no record: it stays in the comparison's table without a curve
    }
  }

  async exportResults(format: 'json' | 'csv'): Promise<void> {
    const lab = this.#lab();
    const sweepId = this.#store.getState().lab.sweep.sweepId;
    if (lab === null || sweepId === null) return;
    try {
      const exported = await lab.exportSweep(sweepId, format);
      if (exported.saved === null) this.#download(exported.fileName, exported.mimeType, exported.content);
    } catch (error) {
      this.#store.getState().pushNotice({ tone: 'error', title: 'The sweep could not be exported', error: fromThrown(error) });
    }
  }

  /** Saves a chart as PNG (its data URL, from ECharts). */
  exportPng(fileName: string, dataUrl: string): void {
    downloadUrl(fileName, dataUrl);
  }

  #handlers(): Parameters<LabApi['startSweep']>[1] {
    return {
      onProgress: (progress) => this.#store.getState().labSweepProgress(progress),
      onPoint: (row) => this.#store.getState().labSweepPoint(row),
      onDone: ({ interrupted, results }) => {
        this.#store.getState().labSweepDone(interrupted, results.rows);
        void this.refreshHistory();
      },
      onError: (error) => {
        this.#store.getState().labSweepFailed(fromRunError(error));
        void this.refreshHistory();
      },
    };
  }

  #lab(): LabApi | null {
    return this.#api.lab ?? null;
  }
}

function defaultName(grid: Readonly<Record<string, readonly unknown[]>>, preset: string): string {
  const varied = Object.entries(grid).map(([key, values]) => `${key} ${values.join('/')}`);
  if (preset !== 'none') varied.unshift(`${preset} sensitivity`);
  return varied.length === 0 ? 'evaluation' : varied.join(', ');
}
