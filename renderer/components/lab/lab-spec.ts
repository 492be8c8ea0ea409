import type { CacheExtensions } from '../../../app/cache/cache-extensions.js';
import { formatLayerMap } from '../../../app/cache/layer-map.js';
import { retrievalTask } from '../../../app/lab/retrieval/registry.js';
import type { SweepSpec, SweepValue } from '../../../app/lab/sweep-spec.js';
import type { LabSetup, LabVariedField } from '../../store/lab-slice.js';
import { LAB_VARIED_FIELDS } from '../../store/lab-slice.js';
import type { RunForm } from '../../store/settings-slice.js';

/**
 * The sweep spec a Lab setup makes from the run panel's fields: every run-panel setting is fixed at
 * its value, except the fields given a list of values, which form the grid (keys are eval's option
 * names, as in a spec file). No varied field and no preset: a sweep of one point, an evaluation.
 * The run panel's kvscope extensions go into the fixed settings under their own option names.
 * With a retrieval task, the text's window fields give way to the task's (task, lengths, depths,
 * samples, seed, as `kvscope eval --task` takes them): every point is a retrieval eval.
 */
export function labSpec(setup: LabSetup, form: RunForm, model: string): { spec: SweepSpec; problems: string[] } {
  const problems: string[] = [];
  const q = form.quantization;
  const base: Record<LabVariedField, SweepValue> = {
    backend: String(q.backend), nbits: q.nbits, 'group-size': q.groupSize, 'residual-length': q.residualLength, 'axis-key': q.axisKey, 'axis-value': q.axisValue,
  };
  const fixed: Record<string, SweepValue> = {
    ep: form.executionProvider, ...(setup.task === 'none' ? { context: setup.context, windows: setup.windows } : retrievalOptions(setup, problems)),
  };
  const grid: Record<string, SweepValue[]> = {};
  const quantized = form.cacheMode === 'quantized';
  if (!quantized) fixed['cache'] = 'dynamic';
  for (const field of LAB_VARIED_FIELDS) {
    const values = parseValues(field, setup.vary[field], problems);
    if (!quantized) {
      if (values.length > 0) problems.push(`--${field} only applies to the quantized cache; the run panel is set to the dynamic cache.`);
      continue;
    }
    if (values.length > 1 || setup.includeDynamic) grid[field] = values.length > 0 ? values : [base[field]];
    else fixed[field] = values[0] ?? base[field];
  }
  if (quantized) {
    // With the dynamic cache as an extra point, every cache option goes in the grid (single values
    // included): eval refuses quantization options next to --cache dynamic, and points take `fixed`.
    const cacheOptions: Record<string, SweepValue> = {
      ...(q.layerPolicy !== 'all' ? { 'layer-policy': q.layerPolicy } : {}), ...extensionOptions(q.extensions),
      // where the cache is dequantized, as the run panel sends it (the default as no choice: eval's default)
      ...(form.dequantize !== 'default' ? { dequantize: form.dequantize } : {}),
    };
    for (const [key, value] of Object.entries(cacheOptions)) {
      if (setup.includeDynamic) grid[key] = [value];
      else fixed[key] = value;
    }
  }
  const points: Record<string, SweepValue>[] = setup.includeDynamic && quantized ? [{ cache: 'dynamic' }] : [];
  if (setup.preset !== 'none' && !quantized) problems.push('Sensitivity presets quantize layers one at a time: set the run panel to the quantized cache.');
  if (setup.preset !== 'none' && setup.task !== 'none') problems.push('Sensitivity presets score the text evaluation\'s windows: set the task to none, or the preset to none.');
  const spec: SweepSpec = {
    model, fixed, grid, points,
    // a retrieval task generates its prompts: no text goes with it
    ...(setup.textPath.trim() === '' || setup.task !== 'none' ? {} : { text: setup.textPath.trim() }),
    ...(setup.preset === 'none' ? {} : { preset: setup.preset }),
  };
  return { spec, problems };
}

/** How many points a spec has before the preset's (which depends on the model's layer count). */
export function gridSize(spec: SweepSpec): number {
  const grid = Object.values(spec.grid).reduce((product, values) => product * values.length, 1);
  return (Object.keys(spec.grid).length > 0 || spec.points.length === 0 ? grid : 0) + spec.points.length;
}

/**
 * The task's options, checked as far as the page can (the list forms eval takes); the runner checks
 * the rest (a length past the model's positions, a model without a tokenizer) and says so per point.
 */
function retrievalOptions(setup: LabSetup, problems: string[]): Record<string, SweepValue> {
  const task = retrievalTask(setup.task);
  const lengths = listText(setup.lengths);
  if (lengths === '') problems.push('Lengths: give the prompt lengths in tokens, comma-separated (for example 1k,2k,4k).');
  else if (!lengths.split(',').every((length) => /^\d+k?$/i.test(length))) problems.push(`Lengths: ${lengths} is not a list of token counts (1024 or 1k).`);
  else {
    // as RULER, a length holds the prompt and the answer's tokens
    const short = lengths.split(',').find((length) => parseInt(length, 10) * (/k$/i.test(length) ? 1024 : 1) <= task.tokensToGenerate);
    if (short !== undefined) problems.push(`Lengths: ${short} leaves no room for the prompt beside ${task.name}'s ${task.tokensToGenerate} answer tokens; give lengths above ${task.tokensToGenerate}.`);
  }
  const depths = listText(setup.depths);
  if (task.hasDepth && !depths.split(',').every((depth) => /^\d+(\.\d+)?$/.test(depth) && Number(depth) <= 100)) {
    problems.push(`Depths: ${depths === '' ? '(empty)' : depths} is not a list of percentages in 0–100.`);
  }
  if (!Number.isInteger(setup.samples) || setup.samples < 1) problems.push('Samples: give a whole number of samples per cell, at least 1.');
  if (!Number.isInteger(setup.seed) || setup.seed < 0) problems.push('Seed: give a whole number, 0 or more.');
  // a task without a needle (cwe, fwe, variable tracking…) takes no depths: eval refuses them
  return { task: task.name, lengths, ...(task.hasDepth ? { depths } : {}), samples: setup.samples, seed: setup.seed };
}

/** A comma-separated list as typed, without spaces: eval's list form. */
function listText(text: string): string {
  return text.split(',').map((item) => item.trim()).filter((item) => item !== '').join(',');
}

function parseValues(field: LabVariedField, text: string, problems: string[]): SweepValue[] {
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

/**
 * The run panel's extensions as eval's options. The layer map goes as its content
 * (`layer-map-text`, the cache plan's map as JSON): a sweep point cannot read the file the panel opened.
 */
function extensionOptions(extensions: CacheExtensions | undefined): Record<string, SweepValue> {
  if (extensions === undefined) return {};
  const out: Record<string, SweepValue> = {};
  if (extensions.nbitsKey !== undefined) out['nbits-key'] = extensions.nbitsKey;
  if (extensions.nbitsValue !== undefined) out['nbits-value'] = extensions.nbitsValue;
  // on one line, as the results table and CSV show options
  if (extensions.layerMap !== undefined) out['layer-map-text'] = JSON.stringify(JSON.parse(formatLayerMap(extensions.layerMap, 'json')));
  if (extensions.fullPrecisionFirstLayers !== undefined) out['full-precision-first'] = extensions.fullPrecisionFirstLayers;
  if (extensions.fullPrecisionLastLayers !== undefined) out['full-precision-last'] = extensions.fullPrecisionLastLayers;
  if (extensions.sinkTokens !== undefined) out['sink-tokens'] = extensions.sinkTokens;
  if (extensions.rotation !== undefined) out['rotate'] = extensions.rotation;
  if (extensions.rotateValues === true) out['rotate-values'] = true;
  if (extensions.outlierQuantile !== undefined) out['outliers'] = extensions.outlierQuantile;
  if (extensions.kvFormatKey !== undefined) out['kv-format-key'] = extensions.kvFormatKey;
  if (extensions.kvFormatValue !== undefined) out['kv-format-value'] = extensions.kvFormatValue;
  if (extensions.calculateKvScales === true) out['calculate-kv-scales'] = true;
  return out;
}
