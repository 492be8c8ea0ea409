import { useId, type ReactNode } from 'react';
import type { DequantizePath } from '../../../app/engine/types.js';
import { useServices, useWorkbench } from '../../services.js';

const LABELS: Readonly<Record<DequantizePath, string>> = {
  graph: 'in the graph (only codes cross into ONNX Runtime; the memory is the method\'s)',
  host: 'on the host (every layer\'s dequantized history fed from JavaScript)',
};

/**
 * Where the quantized cache is dequantized (`--dequantize graph|host`). Both give the same logits bit
 * for bit; they differ in memory and speed. A setting the graph cannot express runs on the host and
 * the run's notes say why.
 */
export function DequantizePathField({ disabled }: { disabled: boolean }): ReactNode {
  const { store } = useServices();
  const value = useWorkbench((s) => s.form.dequantize);
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>Dequantize</label>
      <select id={id} value={value} disabled={disabled} onChange={(event) => store.getState().updateForm({ dequantize: event.target.value as DequantizePath })} data-testid="dequantize-select">
        {(['graph', 'host'] as const).map((path) => <option key={path} value={path}>{LABELS[path]}</option>)}
      </select>
    </div>
  );
}
