import type { ReactNode } from 'react';
import { fromThrown } from '../../store/error-info.js';
import { ErrorDetails } from '../common/ErrorDetails.js';

/** Shown when the window cannot reach any engine at all (no preload, no serve token). */
export function FatalError({ error }: { error: unknown }): ReactNode {
  return (
    <div className="fatal" role="alert" data-testid="fatal-error">
      <h1>kvscope cannot start</h1>
      <ErrorDetails error={fromThrown(error, 'internal', 'Start kvscope with `npm start` (desktop) or open the URL that `kvscope serve` prints, including its ?token=.')} testId="fatal-error-details" />
    </div>
  );
}
