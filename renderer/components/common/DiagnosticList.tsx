import type { ReactNode } from 'react';
import type { DiagnosticPayload } from '../../../app/protocol/read-diagnostic.js';
import { MessageText } from './MessageText.js';
import { withoutDocumentReferences as plain } from '../../format/user-text.js';

const SEVERITY_LABEL = { error: 'Error', warning: 'Warning', info: 'Note' } as const;
const ORIGIN_LABEL = { transformers: 'transformers', backend: 'backend library', kvscope: 'kvscope' } as const;

/** Preflight and model-check findings: severity, who says so, the message, what to do, and the layers concerned. */
export function DiagnosticList({ diagnostics, testId = 'diagnostics', empty }: { diagnostics: readonly DiagnosticPayload[]; testId?: string; empty?: string }): ReactNode {
  if (diagnostics.length === 0) return empty === undefined ? null : <p className="muted" data-testid={`${testId}-empty`}>{empty}</p>;
  return (
    <ul className="diagnostics" data-testid={testId}>
      {diagnostics.map((d, index) => (
        <li key={`${d.code}-${index}`} className={`diagnostic severity-${d.severity}`} data-testid="diagnostic" data-code={d.code} data-severity={d.severity}>
          <div className="diagnostic-head">
            <span className={`badge badge-${d.severity}`}>{SEVERITY_LABEL[d.severity]}</span>
            <span className="origin">{ORIGIN_LABEL[d.origin]}</span>
            <code className="code">{d.code}</code>
          </div>
          <MessageText message={d.message} verbatimFirst={d.origin !== 'kvscope'} />
          {d.fix !== undefined && <p className="fix"><strong>What to do:</strong> {plain(d.fix)}</p>}
          {d.layers.length > 0 && <p className="layers muted">Layers: {compactList(d.layers)}</p>}
        </li>
      ))}
    </ul>
  );
}

/** `0–3, 5, 7` */
export function compactList(values: readonly number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j - i >= 2 ? `${sorted[i]}–${sorted[j]}` : j === i ? `${sorted[i]}` : `${sorted[i]}, ${sorted[j]}`);
    i = j;
  }
  return parts.join(', ');
}
