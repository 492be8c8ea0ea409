import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import { withExplanation } from '../config/verbatim-message.js';
import type { Diagnostic } from './diagnostic.js';
import { unknownBackendMessage } from './transformers-messages.js';

/** `QuantizedCache.__init__` step 1 (spec §1.2): the backend string picks the layer class, case-sensitively. */
export function checkBackend(settings: QuantizedCacheSettings): Diagnostic[] {
  const backend = String(settings.backend);
  if (backend === 'quanto' || backend === 'hqq') return [];
  const lower = backend.toLowerCase();
  const caseOnly = lower === 'quanto' || lower === 'hqq';
  const explanation = caseOnly
    ? `kvscope: backend names are lower-case and matched case-sensitively; "${backend}" was the spelling of the old ` +
      'QuantizedCacheConfig/generate() API, which QuantizedCache refuses.'
    : 'kvscope: QuantizedCache knows two backends, "quanto" and "hqq".';
  return [{
    code: 'unknown-backend',
    severity: 'error',
    origin: 'transformers',
    message: withExplanation(unknownBackendMessage(backend), explanation),
    layers: [],
    fix: caseOnly ? `Use "${lower}".` : 'Use "quanto" (the default) or "hqq".',
  }];
}
