import type { LabSweepSettings } from '../../../app/lab/lab-api-methods.js';
import { labSweepSpec } from '../../../app/lab/lab-sweep-spec.js';
import type { SweepSpec } from '../../../app/lab/sweep-spec.js';
import type { LabSetup, LabVariedField } from '../../store/lab-slice.js';
import { LAB_VARIED_FIELDS } from '../../store/lab-slice.js';
import { toRunSettings, type RunForm } from '../../store/settings-slice.js';

export { gridSize } from '../../../app/lab/lab-sweep-spec.js';

/** The setup's fields by the quantization setting each varies. */
const VARIED_SETTINGS = {
  backend: 'backend', nbits: 'nbits', 'group-size': 'groupSize', 'residual-length': 'residualLength', 'axis-key': 'axisKey', 'axis-value': 'axisValue',
} as const satisfies Record<LabVariedField, keyof LabSweepSettings['vary']>;

/**
 * What the Lab sends to start a sweep, typed: the Run panel's settings exactly as it sends them to
 * startRun (toRunSettings; no graph file, the folder's default graph as before), the lists typed in
 * the setup read as values, the text or the retrieval task, the preset. `problems`: what the lists
 * say wrong, in the setup's words, before anything is sent.
 */
export function labSweepSettings(setup: LabSetup, form: RunForm, model: string): { settings: LabSweepSettings; problems: string[] } {
  const problems: string[] = [];
  const vary = Object.fromEntries(LAB_VARIED_FIELDS.map((field) => [VARIED_SETTINGS[field], parseValues(field, setup.vary[field], problems)])) as unknown as LabSweepSettings['vary'];
  const settings: LabSweepSettings = {
    run: toRunSettings(form, model, null),
    vary,
    includeDynamic: setup.includeDynamic,
    evaluation: setup.task === 'none'
      ? { kind: 'text', ...(setup.textPath.trim() === '' ? {} : { text: setup.textPath.trim() }), context: setup.context, windows: setup.windows }
      : { kind: 'retrieval', task: setup.task, lengths: setup.lengths, depths: setup.depths, samples: setup.samples, seed: setup.seed },
    ...(setup.preset === 'none' ? {} : { preset: setup.preset }),
  };
  return { settings, problems };
}

/** The sweep a setup makes, as the host will make it from the settings sent (the preview's count, the problems). */
export function labSpec(setup: LabSetup, form: RunForm, model: string): { spec: SweepSpec; problems: string[] } {
  const { settings, problems } = labSweepSettings(setup, form, model);
  const made = labSweepSpec(settings);
  return { spec: made.spec, problems: [...problems, ...made.problems] };
}

function parseValues(field: LabVariedField, text: string, problems: string[]): (string | number)[] {
  const items = text.split(',').map((item) => item.trim()).filter((item) => item !== '');
  if (field === 'backend') {
    const bad = items.filter((item) => item !== 'quanto' && item !== 'hqq');
    if (bad.length > 0) problems.push(`backend: ${bad.join(', ')} is not quanto or hqq.`);
    return [...new Set(items)];
  }
  const numbers = items.map(Number);
  const bad = items.filter((_item, i) => !Number.isInteger(numbers[i]));
  if (bad.length > 0) problems.push(`${field}: ${bad.join(', ')} is not an integer.`);
  return [...new Set(numbers.filter(Number.isInteger))];
}
