import type { ReactNode } from 'react';
import type { EntrySide } from '../../../app/cache/cache-extensions.js';
import type { SideChoice } from '../../../app/cache/layer-map-edit.js';
import { RUNTIME_GROUPS } from './runtime-format-groups.js';
import { sideChoiceOf, sideChoiceValue, sideLabel } from './side-choice.js';

export interface SideOptions {
  /** what an unset layer's side gets (the global K/V bits or --kv-format's format) */
  readonly fallback: EntrySide;
  /** the bits the backend stores (backend-rules.ts), e.g. quanto's 2 and 4 */
  readonly bits: readonly number[];
  readonly backend: string;
  /**
   * whether a layer may take bits or a runtime format of its own: not beside --kv-format, which
   * takes every layer and lets the map say only which stay in full precision (extension-problems.ts)
   */
  readonly ownSettings: boolean;
}

/**
 * One side (K or V) of one layer, or of a range: the default, the backend's bits, full precision, or
 * a runtime's KV format (kvscope extensions). A value the list would not offer (bits the backend
 * refuses, from a file) stays shown as it is, so the preflight's refusal on the row has something to point at.
 */
export function LayerSideSelect({ value, options, onPick, keep = false, label, testId, side, disabled, tabIndex }: {
  value: SideChoice | 'keep';
  options: SideOptions;
  onPick: (choice: SideChoice | null) => void;
  /** a range edit's "keep": leave this side as each layer has it */
  keep?: boolean;
  label: string;
  testId: string;
  side: 'key' | 'value';
  disabled?: boolean;
  /** -1: reached by Ctrl+↑/↓ from the row in focus, not by Tab (the list is one Tab stop, not 160) */
  tabIndex?: number;
}): ReactNode {
  const current = value === 'keep' ? 'keep' : sideChoiceValue(value);
  const offered = new Set(['default', 'full', ...(options.ownSettings ? options.bits.map((n) => `bits:${n}`) : [])]);
  const stray = value !== 'keep' && value !== 'default' && !offered.has(current) && !('format' in value && options.ownSettings) ? value : null;
  return (
    <select
      className="layer-side-select" value={current} aria-label={label} title={`${label}: ${value === 'keep' ? 'kept as each layer has it' : value === 'default' ? `the default (${sideLabel(options.fallback)})` : sideLabel(value)}`} data-testid={testId} data-side={side} disabled={disabled} tabIndex={tabIndex}
      onChange={(event) => onPick(sideChoiceOf(event.target.value))}
    >
      {keep && <option value="keep">keep</option>}
      <option value="default">default ({sideLabel(options.fallback)})</option>
      {options.ownSettings && (
        <optgroup label={`${options.backend} bits`}>
          {options.bits.map((n) => <option key={n} value={`bits:${n}`}>{n}-bit</option>)}
        </optgroup>
      )}
      <option value="full">full precision</option>
      {stray !== null && <option value={current}>{sideLabel(stray)} (not offered here)</option>}
      {options.ownSettings && RUNTIME_GROUPS.map(([runtime, formats]) => (
        <optgroup key={runtime} label={runtime}>
          {formats.map((format) => <option key={format.name} value={`format:${format.name}`} title={format.description}>{format.name}</option>)}
        </optgroup>
      ))}
    </select>
  );
}
