import type { CliIo } from './io.js';
import { UsageError } from './io.js';
import { evalSettingsFromOptions, readEvalTextFile, readEvalTextIds } from './eval-options.js';
import type { EvalSettings } from '../lab/eval-settings.js';
import { EvalInputError } from '../lab/lab-errors.js';
import type { SweepPoint } from '../lab/sweep-points.js';
import type { SweepSpec } from '../lab/sweep-spec.js';

/**
 * The text, read once for every point and checked as eval checks it: the spec's "text" or "text-ids"
 * file (relative to the spec's folder), or kvscope's default (null).
 */
export function readSweepText(io: CliIo, spec: SweepSpec, specDir: string): EvalSettings['text'] | null {
  const ids = spec['text-ids'];
  const given = ids ?? spec.text;
  if (given === undefined) return null;
  const path = isAbsolute(given) ? given : io.joinPath(specDir, given);
  return ids !== undefined ? readEvalTextIds(io, path, given) : readEvalTextFile(io, path, given);
}

/** A point's eval settings, parsed by eval's own parser (an Error when its options do not parse). */
export function settingsForPoint(point: SweepPoint, spec: SweepSpec, text: EvalSettings['text'] | null, io: CliIo): EvalSettings | Error {
  const raw: Record<string, string | boolean> = { model: spec.model };
  for (const [key, value] of Object.entries(point.options)) {
    if (typeof value === 'boolean') {
      if (value) raw[key] = true;
    } else {
      raw[key] = String(value);
    }
  }
  try {
    const settings = evalSettingsFromOptions(raw, io);
    return text === null ? settings : { ...settings, text };
  } catch (error) {
    if (error instanceof UsageError || error instanceof EvalInputError) return error;
    throw error;
  }
}

export function parentFolder(path: string): string {
  const cut = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return cut < 0 ? '.' : cut === 0 ? path.slice(0, 1) : path.slice(0, cut);
}

function isAbsolute(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\\\');
}
