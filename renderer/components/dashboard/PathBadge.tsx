import type { ReactNode } from 'react';
import { pathWords, type PathLabel } from '../../format/dequantize-path.js';

/**
 * Where the cache is dequantized, next to a run's settings: the path that ran once the engine said
 * (`data-ran`), else the one the settings lead to, marked as expected; the reason on the line.
 */
export function PathBadge({ label, testId }: { label: PathLabel | null; testId: string }): ReactNode {
  if (label === null) return null;
  return (
    <p className={`path-badge path-${label.path}`} data-testid={testId} data-path={label.path} data-ran={label.ran ? 'true' : 'false'}>
      <strong>{pathWords(label)}</strong>{label.ran ? '' : ' (expected)'} <span className="muted">— {label.why}</span>
    </p>
  );
}
