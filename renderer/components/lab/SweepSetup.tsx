import type { ReactNode } from 'react';
import { RETRIEVAL_TASK_NAMES } from '../../../app/lab/retrieval/retrieval-task.js';
import { retrievalTask } from '../../../app/lab/retrieval/registry.js';
import { SENSITIVITY_PRESETS } from '../../../app/lab/sensitivity.js';
import { useWorkbench, useServices } from '../../services.js';
import { LAB_VARIED_FIELDS, type LabSetup } from '../../store/lab-slice.js';
import { modelArgument } from '../../store/model-slice.js';
import { gridSize, labSpec } from './lab-spec.js';
import { useLabController } from './use-lab.js';

const FIELD_LABELS: Readonly<Record<(typeof LAB_VARIED_FIELDS)[number], string>> = {
  backend: 'backend', nbits: 'bits', 'group-size': 'group size', 'residual-length': 'residual length', 'axis-key': 'key axis', 'axis-value': 'value axis',
};

/**
 * The sweep's setup: every run-panel setting is the base, and each field given a list of values
 * (comma-separated) varies over it; the text's windows, a sensitivity preset, and how many points
 * run side by side. An empty list keeps the run panel's value; no list at all is one evaluation.
 * A retrieval task (kvscope eval --task) replaces the text's windows with the depth × length grid.
 */
export function SweepSetup(): ReactNode {
  const { store } = useServices();
  const lab = useLabController();
  const { setup, form, source, modelOk, status } = useWorkbench((s) => ({
    setup: s.lab.setup, form: s.form, source: s.model.source, modelOk: s.model.summary?.ok === true, status: s.lab.sweep.status,
  }));
  const retrieval = setup.task !== 'none';
  const busy = status === 'starting' || status === 'running' || status === 'stopping';
  const preview = source === null ? null : labSpec(setup, form, modelArgument(source));
  const count = preview === null ? 0 : gridSize(preview.spec);
  const update = (patch: Partial<Omit<LabSetup, 'vary'>>): void => store.getState().updateLabSetup(patch);
  const q = form.quantization;
  const base: Record<string, string> = {
    backend: String(q.backend), nbits: String(q.nbits), 'group-size': String(q.groupSize), 'residual-length': String(q.residualLength),
    'axis-key': String(q.axisKey), 'axis-value': String(q.axisValue),
  };
  return (
    <form className="lab-setup panel" aria-label="Sweep setup" data-testid="lab-setup" onSubmit={(event) => { event.preventDefault(); void lab.start(); }}>
      <h3>Evaluate and sweep</h3>
      <p className="muted">
        {retrieval
          ? 'Scores the run panel\'s cache on generated retrieval prompts (exact match, as RULER scores them) beside the full-precision cache, over the depth × length grid.'
          : 'Scores the run panel\'s cache on a text against the full-precision cache (PPL, KLD, top-1 as llama.cpp reports them).'}
        {' '}Give a field several values to sweep it.
      </p>
      <label className="field">
        <span>Name</span>
        <input type="text" value={setup.name} placeholder="(from what varies)" onChange={(e) => update({ name: e.target.value })} data-testid="lab-name" />
      </label>
      <fieldset className="lab-vary" disabled={form.cacheMode === 'dynamic'}>
        <legend>Values to sweep {form.cacheMode === 'dynamic' && <span className="muted">(the run panel is set to the dynamic cache)</span>}</legend>
        {LAB_VARIED_FIELDS.map((field) => (
          <label className="field" key={field}>
            <span>{FIELD_LABELS[field]}</span>
            <input
              type="text" value={setup.vary[field]} placeholder={base[field]} inputMode={field === 'backend' ? 'text' : 'numeric'}
              onChange={(e) => store.getState().updateLabVary(field, e.target.value)} data-testid={`lab-vary-${field}`}
              aria-label={`${FIELD_LABELS[field]} values to sweep (comma-separated; empty: ${base[field]})`}
            />
          </label>
        ))}
      </fieldset>
      <label className="field">
        <span>Task</span>
        <select value={setup.task} onChange={(e) => update({ task: e.target.value as LabSetup['task'] })} data-testid="lab-task">
          <option value="none">none: the text evaluation (PPL, KLD)</option>
          {RETRIEVAL_TASK_NAMES.map((name) => <option key={name} value={name}>{name}: retrieval, depth × length map</option>)}
        </select>
      </label>
      {retrieval ? (
        <div className="lab-row">
          <label className="field">
            <span>Lengths <span className="muted">(tokens)</span></span>
            <input type="text" value={setup.lengths} placeholder="1k,2k,4k" onChange={(e) => update({ lengths: e.target.value })} data-testid="lab-lengths" />
          </label>
          {retrievalTask(setup.task).hasDepth && (
            <label className="field">
              <span>Depths <span className="muted">(%)</span></span>
              <input type="text" value={setup.depths} placeholder="0,25,50,75,100" onChange={(e) => update({ depths: e.target.value })} data-testid="lab-depths" />
            </label>
          )}
          <label className="field">
            <span>Samples</span>
            <input type="number" min={1} value={setup.samples} onChange={(e) => update({ samples: Number(e.target.value) })} data-testid="lab-samples" />
          </label>
          <label className="field">
            <span>Seed</span>
            <input type="number" min={0} value={setup.seed} onChange={(e) => update({ seed: Number(e.target.value) })} data-testid="lab-seed" />
          </label>
        </div>
      ) : (
        <div className="lab-row">
          <label className="field">
            <span>Context</span>
            <input type="number" min={16} step={16} value={setup.context} onChange={(e) => update({ context: Number(e.target.value) })} data-testid="lab-context" />
          </label>
          <label className="field">
            <span>Windows</span>
            <input type="number" min={1} value={setup.windows} onChange={(e) => update({ windows: Number(e.target.value) })} data-testid="lab-windows" />
          </label>
        </div>
      )}
      <label className="field">
        <span>Jobs {retrieval && <span className="muted">(a retrieval sweep runs one point at a time)</span>}</span>
        <input type="number" min={1} max={16} value={setup.jobs} disabled={retrieval} onChange={(e) => update({ jobs: Math.max(1, Number(e.target.value)) })} data-testid="lab-jobs" />
      </label>
      <label className="field">
        <span>Sensitivity preset <span className="muted">(kvscope extension)</span></span>
        <select value={setup.preset} onChange={(e) => update({ preset: e.target.value as LabSetup['preset'] })} data-testid="lab-preset">
          <option value="none">none</option>
          {SENSITIVITY_PRESETS.map((preset) => (
            <option key={preset} value={preset}>{preset === 'layers' ? 'layers: one layer at a time, K / V / both' : 'kv: keys only vs values only vs both'}</option>
          ))}
        </select>
      </label>
      {!retrieval && (
        <label className="field">
          <span>Text file <span className="muted">(empty: kvscope&apos;s default text)</span></span>
          <input type="text" value={setup.textPath} placeholder="/path/to/text.txt" onChange={(e) => update({ textPath: e.target.value })} data-testid="lab-text" />
        </label>
      )}
      <label className="checkbox">
        <input type="checkbox" checked={setup.includeDynamic} onChange={(e) => update({ includeDynamic: e.target.checked })} data-testid="lab-include-dynamic" />
        {retrieval ? 'also run the full-precision cache as a point of its own' : 'also score the full-precision cache (the reference: KLD 0)'}
      </label>
      {preview !== null && preview.problems.length > 0 && <p className="callout callout-error" role="alert">{preview.problems.join(' ')}</p>}
      <div className="button-row">
        <button type="submit" className="primary" disabled={busy || !modelOk || source === null || (preview?.problems.length ?? 0) > 0} data-testid="lab-start">
          {count <= 1 && setup.preset === 'none' ? 'Evaluate' : setup.preset === 'none' ? `Sweep ${count} points` : `Sweep the ${setup.preset} preset${count > 1 ? ` × ${count}` : ''}`}
        </button>
      </div>
    </form>
  );
}
