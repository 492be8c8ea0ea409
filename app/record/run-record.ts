import { activeExtensions, type ActiveExtension } from '../cache/active-extensions.js';
import type { GenerationResult } from '../engine/generation-result.js';
import { stringifyJson } from '../protocol/json-numbers.js';
import { RECORD_KINDS, recordHeader, RUN_ID_PATTERN, type RecordHeader } from './record-header.js';

/**
 * A saved run: the engine's whole GenerationResult (settings, model identity, execution provider,
 * per-step metrics, final cache bytes, errors, reference summary, prompt ids and text) under the
 * header every record has (record-header.ts), its id included. docs/run-record.md documents every
 * field and its unit.
 */
export const RUN_RECORD_FORMAT = RECORD_KINDS.run.format;
export const RUN_RECORD_VERSION = RECORD_KINDS.run.version;
export { RUN_ID_PATTERN };

export type RunRecordHeader = RecordHeader<'run'> & { readonly id: string };

/**
 * The kvscope extensions beyond transformers that made this run differ from transformers'
 * QuantizedCache (app/cache/active-extensions.ts), named for whoever reads the record; the knobs
 * themselves are in `settings.quantization.extensions`. Absent when none is active (a transformers
 * run, or extensions at their neutral values), so such a record is the plain path's.
 */
export interface RunRecordExtensions {
  readonly extensions?: readonly ActiveExtension[];
}

export type RunRecord = RunRecordHeader & GenerationResult & RunRecordExtensions;

export function createRunRecord(result: GenerationResult, header: { id: string; createdAt: Date; kvscopeVersion: string }): RunRecord {
  return {
    ...(recordHeader('run', header) as RunRecordHeader),
    ...result,
    ...recordExtensions(result),
  };
}

function recordExtensions(result: GenerationResult): RunRecordExtensions {
  const active = result.settings.cacheMode === 'quantized' ? activeExtensions(result.settings.quantization, result.model.numLayers) : [];
  return active.length > 0 ? { extensions: active } : {};
}

/**
 * A new id from the finish time and a random suffix (`20250131-120000-3fa9c1`): sorts by time, and two
 * runs finishing in the same second do not collide. `random` returns 0 ≤ x < 1 (Math.random by default).
 */
export function newRunId(createdAt: Date, random: () => number = Math.random): string {
  const stamp = createdAt.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const suffix = Math.floor(random() * 0x1000000).toString(16).padStart(6, '0');
  return `${stamp}-${suffix}`;
}

/** The record as a file's text: indented JSON, non-finite numbers as `"Infinity"` etc. (json-numbers.ts). */
export function serializeRunRecord(record: RunRecord): string {
  return stringifyJson(record, 1) + '\n';
}
