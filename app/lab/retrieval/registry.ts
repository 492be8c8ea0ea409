import { generateCommonWords } from './common-words.js';
import { generateFrequentWords } from './frequent-words.js';
import { generateNiah, NIAH_SHAPES } from './niah.js';
import { generatePasskey } from './passkey.js';
import { RETRIEVAL_TASK_NAMES, RetrievalTaskError, type RetrievalRequest, type RetrievalSample, type RetrievalTaskName } from './retrieval-task.js';
import type { ScoreMetric } from './score.js';
import { generateVariableTracking } from './variable-tracking.js';

export interface RetrievalTask {
  readonly name: RetrievalTaskName;
  /** whether a depth places something (cwe and fwe have no needle) */
  readonly hasDepth: boolean;
  /** how RULER scores it (scripts/eval/synthetic/constants.py), or the passkey test's own check */
  readonly metric: ScoreMetric;
  /** RULER's tokens_to_generate (constants.py); the passkey test's max_new_tokens (run_test.py) */
  readonly tokensToGenerate: number;
  readonly generate: (request: RetrievalRequest) => RetrievalSample;
}

const TASKS: Record<RetrievalTaskName, RetrievalTask> = {
  passkey: { name: 'passkey', hasDepth: true, metric: 'passkey', tokensToGenerate: 10, generate: generatePasskey },
  'niah-single': { name: 'niah-single', hasDepth: true, metric: 'string_match_all', tokensToGenerate: 128, generate: (r) => generateNiah(NIAH_SHAPES['niah-single'], r) },
  'niah-multikey': { name: 'niah-multikey', hasDepth: true, metric: 'string_match_all', tokensToGenerate: 128, generate: (r) => generateNiah(NIAH_SHAPES['niah-multikey'], r) },
  'niah-multivalue': { name: 'niah-multivalue', hasDepth: true, metric: 'string_match_all', tokensToGenerate: 128, generate: (r) => generateNiah(NIAH_SHAPES['niah-multivalue'], r) },
  'variable-tracking': { name: 'variable-tracking', hasDepth: true, metric: 'string_match_all', tokensToGenerate: 30, generate: generateVariableTracking },
  cwe: { name: 'cwe', hasDepth: false, metric: 'string_match_all', tokensToGenerate: 120, generate: generateCommonWords },
  fwe: { name: 'fwe', hasDepth: false, metric: 'string_match_all', tokensToGenerate: 50, generate: generateFrequentWords },
};

export function retrievalTask(name: string): RetrievalTask {
  if (!(RETRIEVAL_TASK_NAMES as readonly string[]).includes(name)) {
    throw new RetrievalTaskError(`unknown retrieval task "${name}"; choose one of ${RETRIEVAL_TASK_NAMES.join(', ')}`);
  }
  return TASKS[name as RetrievalTaskName];
}
