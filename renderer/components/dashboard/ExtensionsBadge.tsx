import type { ReactNode } from 'react';
import { EXTENSIONS_HEADING, formatActiveExtensions, type ActiveExtension } from '../../../app/cache/active-extensions.js';

/**
 * The kvscope extensions a run used, named as such next to its settings (live and saved alike), so
 * a result is never mistaken for transformers' QuantizedCache. Nothing for a transformers run.
 */
export function ExtensionsBadge({ extensions, testId }: { extensions: readonly ActiveExtension[]; testId: string }): ReactNode {
  if (extensions.length === 0) return null;
  return (
    <p className="extensions-badge" data-testid={testId} data-extensions={extensions.map((item) => item.id).join(' ')}>
      <span className="badge badge-extension">{EXTENSIONS_HEADING}</span> {formatActiveExtensions(extensions)}
    </p>
  );
}
