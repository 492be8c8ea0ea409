import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { ModelKvGeometry } from '../config/kv-geometry.js';
import { withExplanation } from '../config/verbatim-message.js';
import type { BackendRules } from '../quant/backend-rules.js';
import { flushPeriod, isPositiveInteger } from './check-cache-arguments.js';
import type { Diagnostic } from './diagnostic.js';
import { CANDIDATE_GROUP_SIZES, firstFailingQuantize, type LengthFailure } from './quantize-lengths.js';
import { quantizeShapeRule, requiredMultiple, type KvDims, type ShapeRule } from './shape-rules.js';

export interface ShapeCheckInput {
  readonly rules: BackendRules;
  readonly settings: QuantizedCacheSettings;
  readonly geometry: ModelKvGeometry;
  readonly batch: number;
  readonly sequenceLengths: readonly number[] | null;
  readonly quantizedLayers: number[];
  /** kvscope extensions: the keys' and values' own bits (default `settings.nbits` for both) */
  readonly bits?: { readonly key: number; readonly value: number };
  /** kvscope extension: the first S tokens are never quantized, so each quantize call takes S fewer */
  readonly sinkTokens?: number;
}

interface TensorAxis {
  readonly axis: number;
  readonly nbits: number;
  /** `keys`, `values` or `keys and values` */
  readonly tensors: string;
}

/**
 * The backends' grouping constraints (spec §3.1 step 1, §3.2 "Checks" and step 4), which
 * transformers does not check up front: each quantize call (prefill, then every flush) fails when
 * the tensor's element counts do not split into groups. Keys are quantized before values.
 */
export function checkQuantizeShapes(input: ShapeCheckInput): Diagnostic[] {
  const { rules, settings } = input;
  if (input.quantizedLayers.length === 0 || !isPositiveInteger(settings.groupSize)) return [];
  const dims: KvDims = { batch: input.batch, heads: input.geometry.numKeyValueHeads, headDim: input.geometry.headDim };
  const sink = input.sinkTokens ?? 0;
  return tensorAxes(rules, settings, input.bits ?? { key: settings.nbits, value: settings.nbits }).flatMap(({ axis, nbits, tensors }) => {
    const ruleFor = (groupSize: number): ShapeRule => afterSink(quantizeShapeRule(rules.backend, axis, nbits, groupSize, dims), sink);
    return input.sequenceLengths === null
      ? anyPromptDiagnostics(ruleFor, tensors, input)
      : givenPromptDiagnostics(ruleFor, tensors, input, input.sequenceLengths);
  });
}

function tensorAxes(rules: BackendRules, settings: QuantizedCacheSettings, bits: { readonly key: number; readonly value: number }): TensorAxis[] {
  const keyValid = rules.axes.includes(settings.axisKey) && rules.nbits.includes(bits.key);
  const valueValid = rules.axes.includes(settings.axisValue) && rules.nbits.includes(bits.value);
  if (keyValid && valueValid && settings.axisKey === settings.axisValue && bits.key === bits.value) {
    return [{ axis: settings.axisKey, nbits: bits.key, tensors: 'keys and values' }];
  }
  return [
    ...(keyValid ? [{ axis: settings.axisKey, nbits: bits.key, tensors: 'keys' }] : []),
    ...(valueValid ? [{ axis: settings.axisValue, nbits: bits.value, tensors: 'values' }] : []),
  ];
}

/** kvscope's attention sinks: a quantize call of S tokens takes S − sink of them (none while S ≤ sink). */
function afterSink(rule: ShapeRule, sink: number): ShapeRule {
  if (sink === 0) return rule;
  return {
    ...rule,
    grouping: `${rule.grouping}, the first ${sink} sink tokens left out (kvscope extension --sink-tokens)`,
    sinkTokens: sink,
    check: (seq) => (seq <= sink ? null : rule.check(seq - sink)),
  };
}

/** No prompt lengths given: say which lengths work at all. */
function anyPromptDiagnostics(ruleFor: (groupSize: number) => ShapeRule, tensors: string, input: ShapeCheckInput): Diagnostic[] {
  const rule = ruleFor(input.settings.groupSize);
  const multiple = requiredMultiple(rule);
  if (multiple === 1) return [];
  const sink = rule.sinkTokens ?? 0;
  const examplePrompt = sink + multiple + 1;
  const example = rule.check(examplePrompt);
  if (example === null) return [];
  const lengthWord = sink > 0 ? `length minus the ${sink} sink tokens` : 'length';
  const period = flushPeriod(input.settings.residualLength);
  const flushBreaks = period !== null && period % multiple !== 0;
  const universal = CANDIDATE_GROUP_SIZES.filter((size) => requiredMultiple(ruleFor(size)) === 1);
  const explanation =
    `kvscope: ${rule.label} quantizes the ${tensors} as ${rule.grouping}; with q_group_size ${rule.groupSize} every quantized ` +
    `length must be a multiple of ${multiple} tokens, or the backend raises this (here for a ${examplePrompt}-token prompt: ${example.detail}). ` +
    'The cache quantizes the prompt at prefill and re-quantizes P + k·max(R, 2) tokens at each flush, so ' +
    (flushBreaks
      ? `even prompts of a multiple of ${multiple} tokens fail at the first flush, decode step ${period}, since ${period} is not a multiple of ${multiple}.`
      : `prompts whose ${lengthWord} is a multiple of ${multiple} work for any generation length, and other prompts fail at prefill.`);
  return [{
    code: example.code,
    severity: 'warning',
    origin: example.origin,
    message: withExplanation(example.text, explanation),
    layers: input.quantizedLayers,
    fix: [
      `Pad prompts to a multiple of ${multiple} tokens`,
      flushBreaks ? ` and use a residual_length that is a multiple of ${multiple}` : '',
      universal.length > 0 ? `, or use q_group_size ${universal.join(', ')} (works for every length)` : '',
      '. Pass the prompt lengths to the preflight to check them.',
    ].join(''),
  }];
}

/** Prompt lengths given: report the ones that fail, at prefill (error) or at a later flush (warning). */
function givenPromptDiagnostics(
  ruleFor: (groupSize: number) => ShapeRule, tensors: string, input: ShapeCheckInput, prompts: readonly number[],
): Diagnostic[] {
  const rule = ruleFor(input.settings.groupSize);
  const period = flushPeriod(input.settings.residualLength);
  const failures = prompts.flatMap((prompt) => firstFailingQuantize(rule, prompt, period) ?? []);
  if (failures.length === 0) return [];
  const groups = new Map<string, LengthFailure[]>();
  for (const failure of failures) {
    const key = `${failure.failure.code}/${failure.step === 0 ? 'prefill' : 'flush'}`;
    groups.set(key, [...(groups.get(key) ?? []), failure]);
  }
  const working = CANDIDATE_GROUP_SIZES.filter((size) => size !== rule.groupSize && prompts.every((prompt) => firstFailingQuantize(ruleFor(size), prompt, period) === null));
  const multiple = requiredMultiple(rule);
  return [...groups.values()].map((group) => lengthDiagnostic(rule, tensors, group, { period, multiple, working, layers: input.quantizedLayers }));
}

interface LengthContext {
  readonly period: number | null;
  readonly multiple: number;
  readonly working: readonly number[];
  readonly layers: number[];
}

function lengthDiagnostic(rule: ShapeRule, tensors: string, group: readonly LengthFailure[], context: LengthContext): Diagnostic {
  const first = group[0] as LengthFailure;
  const atPrefill = first.step === 0;
  const lengths = group.map((item) => (atPrefill ? `${item.prompt} (${item.failure.detail})` : `${item.prompt} (at decode step ${item.step}, ${item.failure.detail})`));
  const what = `the sequence length must be a multiple of ${context.multiple} tokens` +
    (first.failure.code === 'group-larger-than-tensor' ? `; at these lengths one group of ${rule.groupSize} is larger than the whole tensor` : '');
  const explanation =
    `kvscope: ${rule.label} quantizes the ${tensors} as ${rule.grouping}; with q_group_size ${rule.groupSize} ${what}. ` +
    (atPrefill
      ? `Prompt lengths that fail at prefill: ${lengths.join(', ')}.`
      : `Prompt lengths that pass the prefill but fail when a flush re-quantizes P + k·${context.period} tokens ` +
        `(every max(R, 2) = ${context.period} decode steps), if generation gets that far: ${lengths.join(', ')}.`);
  const fixes = [
    atPrefill ? `pad the prompt to a multiple of ${context.multiple} tokens` : `use a residual_length that is a multiple of ${context.multiple}`,
    context.working.length > 0 ? `use q_group_size ${context.working.join(', ')} (these work for all the given lengths)` : '',
  ].filter((fix) => fix !== '');
  return {
    code: first.failure.code,
    severity: atPrefill ? 'error' : 'warning',
    origin: first.failure.origin,
    message: withExplanation(first.failure.text, explanation),
    layers: context.layers,
    fix: `${capitalize(fixes.join(', or '))}.`,
  };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
