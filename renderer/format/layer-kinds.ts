/** How a layer type looks in the strip and on chart axes: one letter, one colour variable, a name. */
export interface LayerKindStyle {
  readonly letter: string;
  readonly name: string;
  /** CSS custom property holding the colour (styles/app.css) */
  readonly colorVariable: string;
}

const STYLES: Readonly<Record<string, LayerKindStyle>> = {
  full_attention: { letter: 'F', name: 'full attention', colorVariable: '--k-full' },
  sliding_attention: { letter: 'S', name: 'sliding window', colorVariable: '--k-sliding' },
  chunked_attention: { letter: 'C', name: 'chunked attention', colorVariable: '--k-chunked' },
  linear_attention: { letter: 'L', name: 'linear attention', colorVariable: '--k-linear' },
  mamba: { letter: 'M', name: 'mamba (state space)', colorVariable: '--k-mamba' },
  conv: { letter: 'V', name: 'convolution', colorVariable: '--k-conv' },
  hybrid: { letter: 'H', name: 'hybrid', colorVariable: '--k-hybrid' },
  hybrid_sliding: { letter: 'H', name: 'hybrid sliding', colorVariable: '--k-hybrid' },
};

const OTHER: LayerKindStyle = { letter: '?', name: 'other', colorVariable: '--k-other' };

export function layerKindStyle(kind: string): LayerKindStyle {
  return STYLES[kind] ?? { ...OTHER, name: kind.replaceAll('_', ' ') };
}

/** Axis labels `0 F`, `1 S`, … (plain numbers when the kinds are unknown, as for a saved run). */
export function layerLabels(count: number, kinds: readonly string[]): string[] {
  return Array.from({ length: count }, (_, i) => (kinds[i] === undefined ? String(i) : `${i} ${layerKindStyle(kinds[i]!).letter}`));
}
