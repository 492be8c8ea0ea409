import { useId, useState, type ReactNode } from 'react';
import type { LayerEdit, SideChoice } from '../../../app/cache/layer-map-edit.js';
import { parseLayerRange } from '../../../app/cache/layer-range.js';
import { LayerSideSelect } from './LayerSideSelect.js';
import type { RowSideOptions } from './LayerMapRow.js';

/**
 * A bulk edit of the per-layer plan: layers typed as `0-3, 8` or `all` (or picked by clicking row
 * numbers), each side kept, set to the default, bits, full precision or a runtime format, applied
 * with Enter or Apply; "Reset" returns the range to the defaults.
 */
export function LayerRangeBar({ range, onRange, numLayers, options, disabled, onApply }: {
  range: string;
  onRange: (text: string) => void;
  numLayers: number;
  options: RowSideOptions;
  disabled: boolean;
  onApply: (layers: readonly number[], edit: LayerEdit) => void;
}): ReactNode {
  const id = useId();
  const [key, setKey] = useState<SideChoice | 'keep'>('keep');
  const [value, setValue] = useState<SideChoice | 'keep'>('keep');
  const [problem, setProblem] = useState<string | null>(null);
  const sidesEdit = (): LayerEdit | null => {
    const isFull = (choice: SideChoice | 'keep'): boolean => choice !== 'keep' && choice !== 'default' && 'bits' in choice && choice.bits === 'full';
    if (isFull(key) && isFull(value)) return { kind: 'full' };
    if (key === 'default' && value === 'default') return { kind: 'default' };
    if (key === 'keep' && value === 'keep') return null;
    return { kind: 'sides', ...(key === 'keep' ? {} : { key }), ...(value === 'keep' ? {} : { value }) };
  };
  const apply = (edit: LayerEdit | null): void => {
    const parsed = parseLayerRange(range, numLayers);
    if ('problem' in parsed) {
      setProblem(parsed.problem);
      return;
    }
    setProblem(null);
    if (edit !== null) onApply(parsed.layers, edit);
  };
  const edit = sidesEdit();
  return (
    <div className="layer-range" data-testid="layer-range">
      <label htmlFor={id} className="layer-range-label">Layers</label>
      <input
        id={id} type="text" value={range} placeholder="0-3, 8 or all" spellCheck={false} disabled={disabled}
        aria-invalid={problem !== null} aria-describedby={problem !== null ? `${id}-problem` : undefined} data-testid="layer-range-input"
        onChange={(event) => {
          onRange(event.target.value);
          setProblem(null);
        }}
        onKeyDown={(event) => {
          if (event.key !== 'Enter') return;
          event.preventDefault(); // not the run form's submit
          apply(edit);
        }}
      />
      <span className="layer-range-label" aria-hidden="true">K</span>
      <LayerSideSelect value={key} keep options={options.key} onPick={(choice) => setKey(choice ?? 'keep')} label="Range keys" testId="layer-range-key" side="key" disabled={disabled} />
      <span className="layer-range-label" aria-hidden="true">V</span>
      <LayerSideSelect value={value} keep options={options.value} onPick={(choice) => setValue(choice ?? 'keep')} label="Range values" testId="layer-range-value" side="value" disabled={disabled} />
      <div className="button-row layer-range-actions">
        <button type="button" disabled={disabled || edit === null} onClick={() => apply(edit)} data-testid="layer-range-apply">Apply</button>
        <button type="button" disabled={disabled} onClick={() => apply({ kind: 'default' })} title="These layers back to the default" data-testid="layer-range-reset">Reset</button>
      </div>
      {problem !== null && <small id={`${id}-problem`} className="field-problem layer-range-problem" role="alert" data-testid="layer-range-problem">{problem}</small>}
    </div>
  );
}
