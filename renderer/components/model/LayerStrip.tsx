import type { CSSProperties, ReactNode } from 'react';
import { quantizedSidesOf, resolveCachePlan, type SidePlan } from '../../../app/cache/cache-plan.js';
import type { ModelConfig } from '../../../app/config/model-config.js';
import type { Diagnostic } from '../../../app/preflight/diagnostic.js';
import { layerKindStyle } from '../../format/layer-kinds.js';
import type { RunForm } from '../../store/settings-slice.js';

/** `keys-only` / `values-only`: the cache plan quantizes one side and keeps the other in full precision (a layer map's `full` side). */
export type LayerPlanView = 'quantized' | 'keys-only' | 'values-only' | 'full-precision' | 'none';

/**
 * What a run with these settings would do with each layer and side, as the cache plan decides it
 * (app/cache/cache-plan.ts, which the preflight and the engine read too): the layer policy over what
 * each layer really is, and the layers and sides the kvscope extensions keep in full precision
 * (layer map, first/last-N shorthands).
 */
export function plannedLayers(config: ModelConfig, form: Pick<RunForm, 'cacheMode' | 'quantization'>): LayerPlanView[] {
  const plan = resolveCachePlan(config.layers.layers, form.cacheMode === 'dynamic' ? null : form.quantization);
  return plan.map((layer): LayerPlanView => {
    if (layer.cache !== 'quantized') return layer.cache === 'none' ? 'none' : 'full-precision';
    const sides = quantizedSidesOf(plan, layer.layer);
    return sides.key && sides.value ? 'quantized' : sides.key ? 'keys-only' : 'values-only';
  });
}

/**
 * Each layer's runtime formats as the cache plan resolves them (`--kv-format`, or a layer map's
 * format_key/format_value: kvscope extensions), e.g. `K llama.cpp:q8_0, V llama.cpp:q4_0`; null
 * where no side of the layer is in a runtime format.
 */
export function plannedFormats(config: ModelConfig, form: Pick<RunForm, 'cacheMode' | 'quantization'>): (string | null)[] {
  const plan = resolveCachePlan(config.layers.layers, form.cacheMode === 'dynamic' ? null : form.quantization);
  return plan.map((layer) => {
    const side = (name: string, planned: SidePlan): string | null => (planned.kind === 'runtime-format' ? `${name} ${planned.format}` : null);
    const sides = [side('K', layer.key), side('V', layer.value)].filter((text): text is string => text !== null);
    return layer.cache === 'quantized' && sides.length > 0 ? sides.join(', ') : null;
  });
}

const PLAN_TEXT: Readonly<Record<LayerPlanView, string>> = {
  quantized: 'quantized',
  'keys-only': 'keys quantized, values kept in full precision',
  'values-only': 'values quantized, keys kept in full precision',
  'full-precision': 'kept in full precision',
  none: 'no KV cache',
};

/**
 * One cell per decoder layer: its type as a colour and a letter, what the run would do with it
 * (solid: quantized, half solid: one side quantized, outlined: full precision, faded: no KV cache), and a red mark where
 * transformers' QuantizedCache refuses the layer type, before any run.
 */
export function LayerStrip({ config, form, verdict }: { config: ModelConfig; form: Pick<RunForm, 'cacheMode' | 'quantization'>; verdict: Diagnostic | null }): ReactNode {
  const plans = plannedLayers(config, form);
  const formats = plannedFormats(config, form);
  const flagged = new Set(verdict?.layers ?? []);
  const kinds = [...new Set(config.layers.layers.map((layer) => layer.actualKind))];
  return (
    <div className="layer-strip-block">
      <div className="layer-strip" role="list" aria-label={`${config.layers.numLayers} decoder layers by type`} data-testid="layer-strip">
        {config.layers.layers.map((layer, index) => {
          const style = layerKindStyle(layer.actualKind);
          const plan = plans[index]!;
          const isFlagged = flagged.has(index);
          const format = formats[index] ?? null;
          const planText = `${PLAN_TEXT[plan]}${format === null ? '' : ` (${format}, a kvscope extension)`}`;
          const shared = layer.sharesKv ? ', reads an earlier layer\'s cache' : '';
          const transformersType = layer.type !== layer.actualKind ? ` (transformers: ${layer.type})` : '';
          return (
            <span
              key={index}
              role="listitem"
              className={`layer-cell plan-${plan}${isFlagged ? ' flagged' : ''}`}
              style={{ '--kind-color': `var(${style.colorVariable})` } as CSSProperties}
              title={`Layer ${index}: ${style.name}${transformersType}${shared}. ${planText}${isFlagged ? '. transformers\' QuantizedCache refuses this layer type' : ''}`}
              aria-label={`Layer ${index}: ${style.name}, ${planText}${isFlagged ? ', refused by transformers' : ''}`}
              data-testid="layer-cell"
              data-kind={layer.actualKind}
              data-plan={plan}
              {...(format === null ? {} : { 'data-format': format })}
              data-flagged={isFlagged ? 'true' : 'false'}
            >
              {style.letter}
            </span>
          );
        })}
      </div>
      <ul className="layer-legend" aria-label="Layer type legend">
        {kinds.map((kind) => {
          const style = layerKindStyle(kind);
          const count = config.layers.layers.filter((layer) => layer.actualKind === kind).length;
          return (
            <li key={kind}>
              <span className="legend-swatch" style={{ background: `var(${style.colorVariable})` }} aria-hidden="true">{style.letter}</span>
              {style.name} × {count}
            </li>
          );
        })}
        <li className="legend-plan"><span className="legend-swatch plan-quantized" aria-hidden="true" /> quantized</li>
        {plans.some((plan) => plan === 'keys-only' || plan === 'values-only') && (
          <li className="legend-plan"><span className="legend-swatch plan-keys-only" aria-hidden="true" /> one side quantized (title says which)</li>
        )}
        <li className="legend-plan"><span className="legend-swatch plan-full-precision" aria-hidden="true" /> full precision</li>
        {flagged.size > 0 && <li className="legend-plan"><span className="legend-swatch flagged" aria-hidden="true" /> refused by transformers</li>}
      </ul>
    </div>
  );
}
