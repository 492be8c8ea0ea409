import { useId, type ReactNode } from 'react';
import type { ModelSummary } from '../../../app/protocol/workbench-api.js';
import { useServices } from '../../services.js';
import { formatBytes } from '../../format/units.js';
import { DiagnosticList } from '../common/DiagnosticList.js';
import { withoutDocumentReferences as plain } from '../../format/user-text.js';

/** Facts whose values are sentences: a row of their own. */
const WIDE_FACTS: ReadonlySet<string> = new Set(['layout', 'precision', 'graph-size']);

/** The architecture as the cache sees it: layers, heads, KV heads, head_dim, KV dtype, and the graph files. */
export function ModelSummaryView({ summary }: { summary: ModelSummary }): ReactNode {
  const { controller } = useServices();
  const graphId = useId();
  const config = summary.config;
  const geometry = config?.geometry;
  const firstError = summary.diagnostics.find((d) => d.severity === 'error');
  const layout = summary.layout ?? null;
  // What kvscope recognized, shown whether or not the config could be read (issue 11: the layout and the config it read).
  const layoutRows: [string, string, string][] = layout === null ? [] : [
    ['Layout', layout.label, 'layout'],
    ['Config read', layout.crossCheck === null ? layout.configFile : `${layout.configFile}, cross-checked with ${layout.crossCheck}`, 'config-file'],
    ['Precision', layout.precision ?? 'unknown (graph not read)', 'precision'],
    ...(layout.bytes === null ? [] : [['Graph size', `${formatBytes(layout.bytes)}${layout.externalData.length > 0 ? ` (with ${layout.externalData.join(', ')})` : ''}`, 'graph-size'] as [string, string, string]]),
  ];
  const rows: [string, string | number | null | undefined, string][] = geometry === undefined ? [] : [
    ['Model type', config?.modelType ?? '—', 'model-type'],
    ['Layers', geometry.numLayers, 'layers'],
    ['Attention heads', geometry.numAttentionHeads, 'heads'],
    ['KV heads', geometry.numKeyValueHeads, 'kv-heads'],
    ['head_dim', geometry.headDim, 'head-dim'],
    ['Hidden size', geometry.hiddenSize ?? '—', 'hidden'],
    ['Vocabulary', geometry.vocabSize ?? '—', 'vocab'],
    ['Max positions', geometry.maxPositionEmbeddings ?? '—', 'max-positions'],
    ['Sliding window', geometry.slidingWindow ?? 'none', 'sliding-window'],
    ['KV dtype', summary.kvDtype ?? 'unknown (graph not read)', 'kv-dtype'],
    ['Chat template', summary.chatTemplate === null ? 'none' : 'yes', 'chat-template'],
  ];
  return (
    <div className="model-summary" data-testid="model-summary">
      <h3 className="model-name" data-testid="model-name" title={summary.folder ?? undefined}>{summary.displayName}</h3>
      {summary.folder !== null && <p className="folder muted" title={summary.folder}>{summary.folder}</p>}
      {!summary.ok && (
        <div className="callout callout-error" role="alert" data-testid="model-error">
          <strong>This model cannot run.</strong> {firstError?.message ?? 'The model checks found errors.'}
          {firstError?.fix !== undefined && <p className="fix"><strong>What to do:</strong> {plain(firstError.fix)}</p>}
        </div>
      )}
      {rows.length + layoutRows.length > 0 && (
        <dl className="facts">
          {[...layoutRows, ...rows].map(([label, value, key]) => (
            <div key={key} className={WIDE_FACTS.has(key) ? 'fact wide' : 'fact'}>
              <dt>{label}</dt>
              <dd data-testid={`model-fact-${key}`}>{value}</dd>
            </div>
          ))}
        </dl>
      )}
      {summary.onnxFiles.length > 0 && (
        <div className="field">
          <label htmlFor={graphId}>Graph file</label>
          <select id={graphId} value={summary.onnxFile ?? ''} onChange={(event) => void controller.selectOnnxFile(event.target.value)} data-testid="onnx-select">
            {summary.onnxFiles.map((file) => <option key={file} value={file}>{file}</option>)}
          </select>
        </div>
      )}
      {summary.diagnostics.length > 0 && (
        <details className="model-diagnostics" open={!summary.ok && summary.diagnostics.length > 1}>
          <summary>Model checks ({summary.diagnostics.length})</summary>
          <DiagnosticList diagnostics={summary.diagnostics} testId="model-diagnostics" />
        </details>
      )}
    </div>
  );
}
