import type { QuantizedCacheSettings } from '../cache/cache-config.js';
import type { ModelConfig } from '../config/model-config.js';
import type { BackendRules } from '../quant/backend-rules.js';
import type { Diagnostic } from './diagnostic.js';
import { formatLayerList } from './layer-list.js';

/** The transformers docs' axis recommendation (spec §4.1): quanto 0, hqq 1. */
export function checkAxisRecommendation(rules: BackendRules, settings: QuantizedCacheSettings, layers: number[]): Diagnostic[] {
  const axes = [['axis_key', settings.axisKey], ['axis_value', settings.axisValue]] as const;
  const off = axes.filter(([, axis]) => rules.axes.includes(axis) && axis !== rules.recommendedAxis).map(([name]) => name);
  if (off.length === 0) return [];
  const hqqNote = rules.backend === 'hqq'
    ? " transformers' defaults are 0/0 and apply whenever the axes are not set, as in the docs' own hqq example; on axis 0 HQQ groups elements strided through the whole tensor, mixing heads and tokens."
    : ' On axis -1 quanto groups g consecutive token rows of one channel, which requires B·H·S to be a multiple of g.';
  return [{
    code: 'axis-recommendation',
    severity: 'info',
    origin: 'kvscope',
    message: `The transformers docs recommend axis_key = axis_value = ${rules.recommendedAxis} for the ${rules.backend} backend; this run sets ${off.join(' and ')} otherwise.${hqqNote}`,
    layers,
  }];
}

/** Sliding layers whose window covers the whole context behave as full attention; transformers refuses them by type. */
export function checkSlidingWindowCoversContext(config: ModelConfig): Diagnostic[] {
  const { slidingWindow, maxPositionEmbeddings } = config.geometry;
  if (slidingWindow === null || maxPositionEmbeddings === null || slidingWindow < maxPositionEmbeddings) return [];
  const sliding = config.layers.layerTypes.flatMap((type, index) => (type === 'sliding_attention' ? [index] : []));
  if (sliding.length === 0) return [];
  return [{
    code: 'sliding-window-covers-context',
    severity: 'info',
    origin: 'kvscope',
    message:
      `sliding_window ${slidingWindow} is at least max_position_embeddings ${maxPositionEmbeddings}: the sliding layers ` +
      `(${formatLayerList(sliding)}) never drop a token, so they attend like full attention. transformers still refuses them by type.`,
    layers: sliding,
  }];
}

/** The config reader's notes: class defaults used, transformers' blind spots, config oddities. */
export function configNotes(config: ModelConfig): Diagnostic[] {
  return config.notes.map((note) => ({ code: 'config-note', severity: 'info', origin: 'kvscope', message: note, layers: [] }));
}
