import { memo, type CSSProperties, type MouseEvent, type ReactNode } from 'react';
import type { LayerMapEntry } from '../../../app/cache/cache-extensions.js';
import { entrySides, type LayerEdit, type SideChoice } from '../../../app/cache/layer-map-edit.js';
import type { ConfigLayer } from '../../../app/config/layer-types.js';
import type { Diagnostic } from '../../../app/preflight/diagnostic.js';
import { layerKindStyle } from '../../format/layer-kinds.js';
import { withoutDocumentReferences as plain } from '../../format/user-text.js';
import { LayerSideSelect, type SideOptions } from './LayerSideSelect.js';

export interface LayerRowProps {
  readonly layer: ConfigLayer;
  /** the map's entry for this layer; undefined: the layer gets the defaults */
  readonly entry: LayerMapEntry | undefined;
  readonly options: RowSideOptions;
  /**
   * why this layer stays in full precision whatever the map says (the first/last-N shorthand, or the
   * layer policy for its type: layer-plan.ts); its sides are then not editable here. null when it is not
   */
  readonly locked: string | null;
  /** the preflight's refusals of this layer's settings, in the libraries' and runtimes' words */
  readonly refusals: readonly Diagnostic[];
  readonly selected: boolean;
  readonly disabled: boolean;
  /** the row Tab reaches in the list (the last one in focus); the others are reached with Ctrl+↑/↓ */
  readonly tabbable: boolean;
  onFocusRow(layer: number): void;
  onEdit(layer: number, edit: LayerEdit): void;
  /** a click on the layer number: picks it as the range (shift: extends the range to it) */
  onPickLayer(layer: number, extend: boolean): void;
}

/**
 * One decoder layer of the per-layer plan: K and V each the default, the backend's bits, full
 * precision or a runtime's format, a reset, and the preflight's refusal of this layer right under it.
 */
export const LayerMapRow = memo(function LayerMapRow({ layer, entry, options, locked, refusals, selected, disabled, tabbable, onFocusRow, onEdit, onPickLayer }: LayerRowProps): ReactNode {
  const index = layer.index;
  const style = layerKindStyle(layer.actualKind);
  const sides = entry === undefined ? null : entrySides(entry);
  const pick = (side: 'key' | 'value') => (choice: SideChoice | null): void => {
    if (choice !== null) onEdit(index, { kind: 'sides', [side]: choice });
  };
  const refused = refusals.length > 0;
  const noCache = !layer.hasKvCache;
  const tabIndex = tabbable ? 0 : -1;
  return (
    <li
      className={`layer-row${entry === undefined ? '' : ' is-set'}${refused ? ' is-refused' : ''}${selected ? ' is-selected' : ''}`}
      onFocus={() => onFocusRow(index)}
      data-testid="layer-row" data-layer={index} data-set={entry === undefined ? 'false' : 'true'} data-refused={refused ? 'true' : 'false'}
    >
      <button
        type="button" className="layer-row-index" style={{ '--kind-color': `var(${style.colorVariable})` } as CSSProperties}
        onClick={(event: MouseEvent) => onPickLayer(index, event.shiftKey)} disabled={disabled} tabIndex={-1}
        title={`Layer ${index}: ${style.name}. Click to choose it for a range edit; shift-click to extend the range.`}
        aria-label={`Layer ${index} (${style.name}): choose for a range edit`} aria-pressed={selected}
      >
        <span className="layer-row-kind" aria-hidden="true">{style.letter}</span>{index}
      </button>
      {noCache ? <span className="muted layer-row-note">no KV cache ({style.name})</span> : (
        <>
          <LayerSideSelect value={sides?.key ?? 'default'} options={options.key} onPick={pick('key')} label={`Layer ${index} keys`} testId="layer-side-key" side="key" disabled={disabled || locked !== null} tabIndex={tabIndex} />
          <LayerSideSelect value={sides?.value ?? 'default'} options={options.value} onPick={pick('value')} label={`Layer ${index} values`} testId="layer-side-value" side="value" disabled={disabled || locked !== null} tabIndex={tabIndex} />
          <button type="button" className="icon-button layer-row-reset" disabled={disabled || entry === undefined} tabIndex={tabIndex} onClick={() => onEdit(index, { kind: 'default' })}
            title={`Layer ${index} back to the default`} aria-label={`Layer ${index} back to the default`} data-testid="layer-row-reset">↺</button>
        </>
      )}
      {locked !== null && !noCache && <small className="layer-row-note muted" data-testid="layer-row-locked">{locked}</small>}
      {refusalGroups(refusals).map(([verbatim, explanations]) => (
        <div key={verbatim} className="layer-row-refusal" role="note" data-testid="layer-row-refusal">
          <p className="layer-row-refusal-first">{verbatim}</p>
          {explanations.map((line) => <p key={line} className="layer-row-refusal-explanation">{line}</p>)}
        </div>
      ))}
    </li>
  );
});

/**
 * The refusals by their first line (the library's or runtime's own words, STYLE.md §10), each once,
 * with kvscope's explanations under it: a format refused on both sides of a layer reads as one refusal
 * naming both sides.
 */
function refusalGroups(refusals: readonly Diagnostic[]): [string, string[]][] {
  const groups = new Map<string, string[]>();
  for (const diagnostic of refusals) {
    const [first = '', ...rest] = plain(diagnostic.message).split('\n').filter((line) => line.trim() !== '');
    const explanations = groups.get(first) ?? [];
    for (const line of rest) if (!explanations.includes(line)) explanations.push(line);
    groups.set(first, explanations);
  }
  return [...groups];
}

export interface RowSideOptions {
  readonly key: SideOptions;
  readonly value: SideOptions;
}
