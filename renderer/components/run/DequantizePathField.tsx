import { useId, type ReactNode } from 'react';
import { useServices, useWorkbench } from '../../services.js';
import type { DequantizeChoice } from '../../store/settings-slice.js';

const LABELS: Readonly<Record<DequantizeChoice, string>> = {
  default: 'in the graph where the settings allow (default; else on the host, saying why)',
  graph: 'in the graph only (refused when the settings need the host)',
  host: 'on the host (every layer\'s dequantized history fed from JavaScript)',
};

/**
 * Where the quantized cache is dequantized (`--dequantize graph|host`, or no choice). Both give the
 * same logits bit for bit; they differ in memory and speed. The default runs a setting the graph
 * cannot express on the host and the run says why; an explicit "in the graph" the settings do not
 * allow is refused before Run by the run check, with the reason, as `kvscope run --dequantize graph`.
 */
export function DequantizePathField({ disabled }: { disabled: boolean }): ReactNode {
  const { store } = useServices();
  const value = useWorkbench((s) => s.form.dequantize);
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>Dequantize</label>
      <select id={id} value={value} disabled={disabled} onChange={(event) => store.getState().updateForm({ dequantize: event.target.value as DequantizeChoice })} data-testid="dequantize-select">
        {(['default', 'graph', 'host'] as const).map((path) => <option key={path} value={path}>{LABELS[path]}</option>)}
      </select>
    </div>
  );
}
