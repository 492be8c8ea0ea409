import type { ReactNode } from 'react';
import { useServices, useWorkbench } from '../../services.js';
import { NumberField } from '../common/NumberField.js';

/** Greedy decoding, or temperature / top-k / top-p sampling with a seed (same seed, same tokens). */
export function SamplingFields(): ReactNode {
  const { store } = useServices();
  const sampling = useWorkbench((s) => s.form.sampling);
  const update = store.getState().updateSampling;
  return (
    <fieldset className="sampling">
      <legend>Sampling</legend>
      <div className="segmented">
        <label className={sampling.greedy ? 'selected' : undefined}>
          <input type="radio" name="sampling" checked={sampling.greedy} onChange={() => update({ greedy: true })} data-testid="sampling-greedy" />
          Greedy
        </label>
        <label className={!sampling.greedy ? 'selected' : undefined}>
          <input type="radio" name="sampling" checked={!sampling.greedy} onChange={() => update({ greedy: false })} data-testid="sampling-sample" />
          Sample
        </label>
      </div>
      {!sampling.greedy && (
        <div className="grid-2">
          <NumberField label="Temperature" value={sampling.temperature} integer={false} min={0} onCommit={(temperature) => update({ temperature })} testId="temperature-input" />
          <NumberField label="Top-k" value={sampling.topK} min={0} onCommit={(topK) => update({ topK })} testId="top-k-input" hint="0 = off" />
          <NumberField label="Top-p" value={sampling.topP} integer={false} min={0} max={1} onCommit={(topP) => update({ topP })} testId="top-p-input" hint="1 = off" />
          <NumberField label="Seed" value={sampling.seed} min={0} onCommit={(seed) => update({ seed })} testId="seed-input" />
        </div>
      )}
    </fieldset>
  );
}
