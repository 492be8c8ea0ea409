import { useId, useState, type ReactNode } from 'react';
import type { LayerMap } from '../../../app/cache/cache-extensions.js';
import { formatLayerMap, parseLayerMap } from '../../../app/cache/layer-map.js';

/** A file name from the model's name: letters, digits, dots, dashes and underscores only. */
export function layerMapFileName(modelName: string | null, suffix: string): string {
  const base = (modelName ?? 'model').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'model';
  return `${base}-${suffix}.yaml`;
}

/**
 * The plan as files: load a layer map (KVTuner preset, YAML or JSON: it fills the editor), save the
 * layers set as YAML, or every layer as the cache plan resolves it (what `--write-layer-map` writes);
 * both read back with `--layer-map` and here.
 */
export function LayerMapFiles({ map, resolved, modelName, disabled, onLoad, onSave }: {
  map: LayerMap | undefined;
  /** every layer with a KV cache as the cache plan resolves it; null without a model */
  resolved: LayerMap | null;
  modelName: string | null;
  disabled: boolean;
  onLoad: (map: LayerMap) => void;
  onSave: (fileName: string, text: string) => void;
}): ReactNode {
  const id = useId();
  const [error, setError] = useState<string | null>(null);
  return (
    <div className="layer-map-files">
      <div className="button-row">
        <label htmlFor={id} className="file-button" title="Load a layer map: KVTuner preset YAML, or the same mapping as JSON">
          Load…
          <input
            id={id} type="file" accept=".yaml,.yml,.json" data-testid="layer-map-input" disabled={disabled} className="visually-hidden"
            onChange={(event) => {
              const input = event.target;
              const file = input.files?.[0];
              if (file === undefined) return;
              void file.text().then((text) => {
                try {
                  onLoad(parseLayerMap(text, file.name));
                  setError(null);
                } catch (thrown) {
                  setError(thrown instanceof Error ? thrown.message : String(thrown));
                }
                input.value = ''; // the same file may be loaded again after edits
              });
            }}
          />
        </label>
        <button type="button" disabled={map === undefined} onClick={() => onSave(layerMapFileName(modelName, 'layer-map'), formatLayerMap(map!, 'yaml'))}
          title="The layers set here, as a KVTuner preset YAML (kvscope run --layer-map FILE reads it)" data-testid="layer-map-save">Save YAML</button>
        <button type="button" disabled={resolved === null} onClick={() => onSave(layerMapFileName(modelName, 'cache-plan'), formatLayerMap(resolved!, 'yaml'))}
          title="Every layer as the cache plan resolves it, defaults and first/last-N included (as --write-layer-map writes)" data-testid="layer-map-save-resolved">Save every layer</button>
      </div>
      {error !== null && <small className="hint block error" role="alert" data-testid="layer-map-error">{error}</small>}
    </div>
  );
}
