import type { LabSweepSettings } from './lab-api-methods.js';
import { retrievalTask } from './retrieval/registry.js';
import { cacheOptions, hasRuntimeFormat, QUANTIZATION_FIELDS, QUANTIZATION_OPTIONS, quantizationOptions } from './run-settings-options.js';
import type { SweepSpec, SweepValue } from './sweep-spec.js';

/**
 * The sweep a Lab request makes (the host's, from the typed settings the page sent; the page's own
 * preview, from the same function): every Run-panel setting is fixed at its value, except the
 * quantization fields given values, which form the grid (keys are eval's option names, as in a spec
 * file, written by run-settings-options.ts). No varied field and no preset: a sweep of one point, an
 * evaluation. A retrieval task's options take the place of the text's windows (task, lengths, depths,
 * samples, seed, as `kvscope eval --task` takes them): every point is a retrieval eval. `problems`
 * say, in the setup's words, what keeps the sweep from running; the spec is not to be run with any.
 */
export function labSweepSpec(settings: LabSweepSettings): { spec: SweepSpec; problems: string[] } {
  const { run, vary, includeDynamic, evaluation, preset } = settings;
  const problems: string[] = [];
  const quantized = run.cacheMode === 'quantized';
  const base = quantizationOptions(run.quantization);
  const runtimeFormat = hasRuntimeFormat(run.quantization);
  const fixed: Record<string, SweepValue> = {
    ep: run.executionProvider, ...(run.onnxFile === undefined ? {} : { onnx: run.onnxFile }),
    ...(evaluation.kind === 'text' ? { context: evaluation.context, windows: evaluation.windows } : retrievalOptions(evaluation, problems)),
  };
  const grid: Record<string, SweepValue[]> = {};
  if (!quantized) fixed['cache'] = 'dynamic';
  for (const field of QUANTIZATION_FIELDS) {
    const key = QUANTIZATION_OPTIONS[field];
    const values: SweepValue[] = [...new Set<SweepValue>(vary[field])];
    if (!quantized) {
      if (values.length > 0) problems.push(`--${key} only applies to the quantized cache; the run panel is set to the dynamic cache.`);
      continue;
    }
    if (runtimeFormat) {
      if (values.length > 0) problems.push(`--${key} configures transformers' QuantizedCache, which the run panel's runtime KV format replaces; clear the format or the values to sweep.`);
      continue;
    }
    if (values.length > 1 || includeDynamic) grid[key] = values.length > 0 ? values : [base[key]!];
    else fixed[key] = values[0] ?? base[key]!;
  }
  if (quantized) {
    // With the dynamic cache as an extra point, every cache option goes in the grid (single values
    // included): eval refuses quantization options next to --cache dynamic, and points take `fixed`.
    for (const [key, value] of Object.entries(cacheOptions(run))) {
      if (includeDynamic) grid[key] = [value];
      else fixed[key] = value;
    }
  }
  const points: Record<string, SweepValue>[] = includeDynamic && quantized ? [{ cache: 'dynamic' }] : [];
  if (preset !== undefined && !quantized) problems.push('Sensitivity presets quantize layers one at a time: set the run panel to the quantized cache.');
  if (preset !== undefined && evaluation.kind !== 'text') problems.push('Sensitivity presets score the text evaluation\'s windows: set the task to none, or the preset to none.');
  const text = evaluation.kind === 'text' ? evaluation.text?.trim() ?? '' : '';
  const spec: SweepSpec = {
    model: run.model, fixed, grid, points,
    // a retrieval task generates its prompts: no text goes with it
    ...(text === '' ? {} : { text }),
    ...(preset === undefined ? {} : { preset }),
  };
  return { spec, problems };
}

/** How many points a spec has before the preset's (which depends on the model's layer count). */
export function gridSize(spec: SweepSpec): number {
  const grid = Object.values(spec.grid).reduce((product, values) => product * values.length, 1);
  return (Object.keys(spec.grid).length > 0 || spec.points.length === 0 ? grid : 0) + spec.points.length;
}

type RetrievalEvaluation = Extract<LabSweepSettings['evaluation'], { kind: 'retrieval' }>;

/**
 * The task's options, checked as far as they can be before a model is read (the list forms eval
 * takes); the runner checks the rest (a length past the model's positions, a model without a
 * tokenizer) and says so per point.
 */
function retrievalOptions(evaluation: RetrievalEvaluation, problems: string[]): Record<string, SweepValue> {
  const task = retrievalTask(evaluation.task);
  const lengths = listText(evaluation.lengths);
  if (lengths === '') problems.push('Lengths: give the prompt lengths in tokens, comma-separated (for example 1k,2k,4k).');
  else if (!lengths.split(',').every((length) => /^\d+k?$/i.test(length))) problems.push(`Lengths: ${lengths} is not a list of token counts (1024 or 1k).`);
  else {
    // as RULER, a length holds the prompt and the answer's tokens
    const short = lengths.split(',').find((length) => parseInt(length, 10) * (/k$/i.test(length) ? 1024 : 1) <= task.tokensToGenerate);
    if (short !== undefined) problems.push(`Lengths: ${short} leaves no room for the prompt beside ${task.name}'s ${task.tokensToGenerate} answer tokens; give lengths above ${task.tokensToGenerate}.`);
  }
  const depths = listText(evaluation.depths);
  if (task.hasDepth && !depths.split(',').every((depth) => /^\d+(\.\d+)?$/.test(depth) && Number(depth) <= 100)) {
    problems.push(`Depths: ${depths === '' ? '(empty)' : depths} is not a list of percentages in 0–100.`);
  }
  if (!Number.isInteger(evaluation.samples) || evaluation.samples < 1) problems.push('Samples: give a whole number of samples per cell, at least 1.');
  if (!Number.isInteger(evaluation.seed) || evaluation.seed < 0) problems.push('Seed: give a whole number, 0 or more.');
  // a task without a needle (cwe, fwe, variable tracking…) takes no depths: eval refuses them
  return { task: task.name, lengths, ...(task.hasDepth ? { depths } : {}), samples: evaluation.samples, seed: evaluation.seed };
}

/** A comma-separated list as typed, without spaces: eval's list form. */
function listText(text: string): string {
  return text.split(',').map((item) => item.trim()).filter((item) => item !== '').join(',');
}
