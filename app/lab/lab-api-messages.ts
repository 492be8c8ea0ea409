import type { RunErrorPayload } from '../protocol/messages.js';
import type { RequestsOf, ResultsOf } from '../protocol/api-declaration.js';
import {
  arrayReader, choiceReader, integerReader, nullableReader, readCount, readNumber, readObject, readString, rejectField, withOptional, type ObjectFields, type Read,
} from '../protocol/field-readers.js';
import { SWEEP_ID_PATTERN, type LabSweepProgress } from './lab-api.js';
import type { LAB_METHODS } from './lab-api-methods.js';
import type { RetrievalMapJson } from './sweep-folder.js';
import type { RetrievalRow, SweepResults, SweepRow } from './sweep-results.js';

/**
 * The Lab's part of the workbench API transport (app/protocol/api-messages.ts includes these in its
 * unions): requests and results (declared in lab-api-methods.ts), and a sweep's events, tagged with the id of the
 * `lab-start-sweep` request that began it.
 */
/** The Lab's requests and their results, from the declaration (lab-api-methods.ts). */
export type LabApiRequest = RequestsOf<typeof LAB_METHODS>;

export type LabApiResults = ResultsOf<typeof LAB_METHODS>;

export type LabApiEvent =
  | { readonly type: 'lab-sweep-progress'; readonly id: number; readonly sweepId: string; readonly progress: LabSweepProgress }
  | { readonly type: 'lab-sweep-point'; readonly id: number; readonly sweepId: string; readonly row: SweepRow }
  | { readonly type: 'lab-sweep-done'; readonly id: number; readonly sweepId: string; readonly interrupted: boolean; readonly results: SweepResults }
  | { readonly type: 'lab-sweep-error'; readonly id: number; readonly sweepId: string; readonly error: RunErrorPayload };

export const LAB_EVENT_TYPES = ['lab-sweep-progress', 'lab-sweep-point', 'lab-sweep-done', 'lab-sweep-error'] as const;

export function isLabEventType(type: string): type is LabApiEvent['type'] {
  return (LAB_EVENT_TYPES as readonly string[]).includes(type);
}

const readSweepId: Read<string> = (value, path) => {
  const id = readString(value, path);
  return SWEEP_ID_PATTERN.test(id) ? id : rejectField(path, 'a sweep id (letters, digits, ".", "_" and "-")', value);
};

/** A lab event from the host (the page checks what the host sends, as for runs). */
export function readLabApiEvent(fields: ObjectFields, type: LabApiEvent['type']): LabApiEvent {
  const id = fields.get('id', integerReader(1));
  const sweepId = fields.get('sweepId', readSweepId);
  switch (type) {
    case 'lab-sweep-progress': {
      const progress = readObject(fields.get('progress', (v) => v), 'progress');
      return { type, id, sweepId, progress: { done: progress.get('done', readCount), total: progress.get('total', readCount), running: progress.get('running', arrayReader(readString)) } };
    }
    case 'lab-sweep-point':
      return { type, id, sweepId, row: fields.get('row', readSweepRow) };
    case 'lab-sweep-done':
      return { type, id, sweepId, interrupted: fields.get('interrupted', (v, p) => (typeof v === 'boolean' ? v : rejectField(p, 'true or false', v))), results: fields.get('results', readSweepResults) };
    case 'lab-sweep-error': {
      const error = readObject(fields.get('error', (v) => v), 'error');
      const fix = error.optional('fix', readString);
      return { type, id, sweepId, error: { code: error.get('code', readString) as RunErrorPayload['code'], message: error.get('message', readString), ...(fix === undefined ? {} : { fix }) } };
    }
    default: {
      const unknown: never = type;
      throw new Error(`Unhandled lab event ${String(unknown)}`);
    }
  }
}

export const readSweepRow: Read<SweepRow> = (value, path) => {
  const f = readObject(value, path);
  const optionValues = f.get('options', readOptionValues);
  return {
    index: f.get('index', readCount),
    name: f.get('name', readString),
    status: f.get('status', choiceReader(['ok', 'refused', 'failed'] as const)),
    reason: f.get('reason', nullableReader(readString)),
    options: optionValues,
    settings: f.get('settings', nullableReader((v, p) => {
      const s = readObject(v, p);
      return {
        cacheMode: s.get('cacheMode', readString), backend: s.get('backend', readString), nbits: s.get('nbits', readNumber), axisKey: s.get('axisKey', readNumber),
        axisValue: s.get('axisValue', readNumber), groupSize: s.get('groupSize', readNumber), residualLength: s.get('residualLength', readNumber),
        layers: s.get('layers', readString), parts: s.get('parts', readString),
        ...withOptional('dequantize', s.optional('dequantize', readString)),
      };
    })),
    result: f.get('result', nullableReader((v, p) => {
      const r = readObject(v, p);
      const n = (key: string): number => r.get(key, readNumber);
      return {
        tokens: n('tokens'), ppl: n('ppl'), pplError: n('pplError'), pplReference: n('pplReference'), pplReferenceError: n('pplReferenceError'),
        deltaPpl: n('deltaPpl'), deltaPplError: n('deltaPplError'), pplRatio: n('pplRatio'), pplRatioError: n('pplRatioError'),
        kldMean: n('kldMean'), kldMeanError: n('kldMeanError'), kldMedian: n('kldMedian'), kldP99: n('kldP99'), kldP999: n('kldP999'), kldMax: n('kldMax'),
        top1Agreement: n('top1Agreement'), top1AgreementError: n('top1AgreementError'), deltaPMean: n('deltaPMean'), deltaPMeanError: n('deltaPMeanError'),
        deltaPRms: n('deltaPRms'), deltaPRmsError: n('deltaPRmsError'), bitsPerValue: n('bitsPerValue'), storedBytes: n('storedBytes'), fp16BaselineBytes: n('fp16BaselineBytes'),
      };
    })),
    ...withOptional('retrieval', f.optional('retrieval', readRetrievalRow)),
  };
};

/** A retrieval point's figures and maps (sweep-results.ts's RetrievalRow). */
const readRetrievalRow: Read<RetrievalRow> = (value, path) => {
  const r = readObject(value, path);
  return {
    task: r.get('task', readString), metric: r.get('metric', readString), accuracy: r.get('accuracy', readNumber),
    accuracyReference: r.get('accuracyReference', readNumber), samples: r.get('samples', readCount), kvBytesLongest: r.get('kvBytesLongest', readNumber),
    map: r.get('map', readRetrievalMap), referenceMap: r.get('referenceMap', readRetrievalMap),
  };
};

const readRetrievalMap: Read<RetrievalMapJson> = (value, path) => {
  const m = readObject(value, path);
  return {
    lengths: m.get('lengths', arrayReader(readNumber)),
    depths: m.get('depths', arrayReader(nullableReader(readNumber))),
    accuracy: m.get('accuracy', arrayReader(arrayReader(nullableReader(readNumber)))),
  };
};

const readOptionValues: Read<Record<string, string | number | boolean>> = (value, path) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return rejectField(path, 'an object', value);
  const out: Record<string, string | number | boolean> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (typeof item !== 'string' && typeof item !== 'number' && typeof item !== 'boolean') rejectField(`${path}.${key}`, 'a string, number or boolean', item);
    out[key] = item;
  }
  return out;
};

export const readSweepResults: Read<SweepResults> = (value, path) => {
  const f = readObject(value, path);
  return {
    format: f.get('format', (v, p) => (v === 'kvscope-sweep-results' ? v : rejectField(p, '"kvscope-sweep-results"', v))),
    version: f.get('version', (v, p) => (v === 1 ? 1 : rejectField(p, '1', v))),
    specSha256: f.get('specSha256', readString),
    points: f.get('points', readCount),
    rows: f.get('rows', arrayReader(readSweepRow)),
  };
};
