import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import { withExplanation } from '../config/verbatim-message.js';
import type { BackendRules } from '../quant/backend-rules.js';
import type { Diagnostic, DiagnosticCode } from './diagnostic.js';
import { axisMessage, nbitsMessage } from '../quant/library-messages.js';

/**
 * The layer constructor's checks, in its order: nbits, axis_key, axis_value (spec §1.2). transformers
 * raises from the first layer built, so each message concerns every layer at once.
 */
export function checkBackendArguments(rules: BackendRules, settings: QuantizedCacheSettings, layers: number[]): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  if (!rules.nbits.includes(settings.nbits)) {
    diagnostics.push(argumentError('invalid-nbits', nbitsMessage(rules.messageName, rules.nbits, settings.nbits),
      `kvscope: the ${rules.backend} backend stores ${rules.nbits.join(', ')}-bit codes only.`,
      `Use nbits ${rules.nbits.includes(4) ? 4 : rules.nbits[0]}.`, layers));
  }
  for (const [argument, axis] of [['axis_key', settings.axisKey], ['axis_value', settings.axisValue]] as const) {
    if (rules.axes.includes(axis)) continue;
    diagnostics.push(argumentError(argument === 'axis_key' ? 'invalid-axis-key' : 'invalid-axis-value',
      axisMessage(rules.messageName, argument, rules.axes, axis),
      `kvscope: ${rules.backend} groups along axis ${rules.axes.join(' or ')}.`,
      `Use ${argument} ${rules.recommendedAxis} (the transformers docs' recommendation for ${rules.backend}).`, layers));
  }
  return diagnostics;
}

function argumentError(code: DiagnosticCode, verbatim: string, explanation: string, fix: string, layers: number[]): Diagnostic {
  return { code, severity: 'error', origin: 'transformers', message: withExplanation(verbatim, explanation), layers, fix };
}
