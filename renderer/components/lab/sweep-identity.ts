import type { SweepSpec } from '../../../app/lab/sweep-spec.js';
import type { ChartIdentity } from '../../export/chart-png.js';

/**
 * What a Lab figure says about itself, like a run chart's header: the sweep's id (and name), the
 * model, and the settings every point shares (`fixed`) with what the sweep varies (`grid`).
 */
export function sweepIdentity(sweepId: string | null, name: string, spec: SweepSpec | null): ChartIdentity {
  const id = sweepId === null ? 'unsaved sweep' : `sweep ${sweepId}${name !== '' && name !== sweepId ? ` (${name})` : ''}`;
  if (spec === null) return { runId: id, model: 'no model', settings: '' };
  const model = spec.model.split(/[\\/]/).filter((part) => part !== '').at(-1) ?? spec.model;
  const fixed = Object.entries(spec.fixed).map(([key, value]) => `${key} ${String(value)}`).join(', ');
  const varied = Object.entries(spec.grid).map(([key, values]) => `${key} ∈ {${values.map(String).join(', ')}}`).join(', ');
  const extra = spec.points.length > 0 ? ` + ${spec.points.length} extra point(s)` : '';
  return { runId: id, model, settings: [fixed, varied === '' ? '' : `varied: ${varied}`].filter((part) => part !== '').join(' · ') + extra };
}
