import { useEffect, useId, useState, type ReactNode } from 'react';

interface NumberFieldProps {
  readonly label: string;
  readonly value: number;
  readonly onCommit: (value: number) => void;
  readonly testId: string;
  readonly min?: number;
  readonly max?: number;
  readonly step?: number;
  readonly integer?: boolean;
  readonly disabled?: boolean;
  readonly hint?: string;
  readonly unit?: string;
  /**
   * told what is typed whenever it is not a valid value (null once it is): a field whose invalid
   * text must be argued with (the what-if) keeps it on screen instead of snapping back on blur
   */
  readonly onInvalid?: (text: string | null) => void;
}

/**
 * A numeric input that keeps what is being typed (an empty field, `0.`) as a draft and commits only
 * valid numbers, so the store never holds a half-typed value.
 */
export function NumberField({ label, value, onCommit, testId, min, max, step, integer = true, disabled, hint, unit, onInvalid }: NumberFieldProps): ReactNode {
  const id = useId();
  const [draft, setDraft] = useState(String(value));
  useEffect(() => setDraft(String(value)), [value]);
  const parsed = Number(draft);
  const valid = draft.trim() !== '' && Number.isFinite(parsed) && (!integer || Number.isInteger(parsed)) && (min === undefined || parsed >= min) && (max === undefined || parsed <= max);
  return (
    <div className="field">
      <label htmlFor={id}>{label}{unit !== undefined && <span className="unit"> ({unit})</span>}</label>
      <input
        id={id}
        type="number"
        inputMode={integer ? 'numeric' : 'decimal'}
        value={draft}
        min={min}
        max={max}
        step={step ?? (integer ? 1 : 'any')}
        disabled={disabled}
        aria-invalid={!valid}
        aria-describedby={hint !== undefined ? `${id}-hint` : undefined}
        data-testid={testId}
        onChange={(event) => {
          const text = event.target.value;
          setDraft(text);
          const next = Number(text);
          const ok = text.trim() !== '' && Number.isFinite(next) && (!integer || Number.isInteger(next)) && (min === undefined || next >= min) && (max === undefined || next <= max);
          if (ok) onCommit(next);
          onInvalid?.(ok ? null : text);
        }}
        onBlur={() => {
          if (onInvalid === undefined) setDraft(String(value));
        }}
      />
      {hint !== undefined && <small id={`${id}-hint`} className="hint">{hint}</small>}
    </div>
  );
}
