import type { ReactNode } from 'react';
import type { ErrorInfo } from '../../store/error-info.js';
import { DiagnosticList } from './DiagnosticList.js';
import { MessageText } from './MessageText.js';
import { withoutDocumentReferences as plain } from '../../format/user-text.js';

/** The library texts quoted in the findings (their first lines), to show them verbatim inside the message. */
function verbatimTexts(diagnostics: ErrorInfo['diagnostics']): string[] {
  return (diagnostics ?? []).filter((d) => d.origin !== 'kvscope').map((d) => d.message.split('\n')[0]!);
}

/** An error with its code, its message, what to do, and the findings behind it (never a stack trace). */
export function ErrorDetails({ error, testId = 'error' }: { error: ErrorInfo; testId?: string }): ReactNode {
  const diagnostics = error.diagnostics ?? [];
  return (
    <div className="error-details" data-testid={testId}>
      <p className="error-code-line"><code className="code" data-testid={`${testId}-code`}>{error.code}</code></p>
      <MessageText message={error.message} testId={`${testId}-message`} verbatimLines={verbatimTexts(diagnostics)} />
      {error.fix !== undefined && <p className="fix" data-testid={`${testId}-fix`}><strong>What to do:</strong> {plain(error.fix)}</p>}
      {diagnostics.length > 0 && (
        <details className="error-diagnostics">
          <summary>{diagnostics.length} finding{diagnostics.length === 1 ? '' : 's'} behind this</summary>
          <DiagnosticList diagnostics={diagnostics} testId={`${testId}-diagnostics`} />
        </details>
      )}
    </div>
  );
}
