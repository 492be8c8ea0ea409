/** A list of layers as typed, or why it cannot be read (said so the field can show it). */
export type LayerRange = { readonly layers: readonly number[] } | { readonly problem: string };

/**
 * Decoder layers as a researcher types them, the inverse of `formatLayerList` (preflight/layer-list.ts):
 * `all`, `3`, `0-3` (also `0–3` and `0..3`), or several joined by commas (`0-3, 8, 10-12`). Each index
 * must exist in a model of `numLayers` layers; the result is ascending, each layer once.
 */
export function parseLayerRange(text: string, numLayers: number): LayerRange {
  const trimmed = text.trim();
  const last = numLayers - 1;
  if (trimmed === '') return { problem: `Type the layers: 0-3, 8 or all (this model has layers 0–${last}).` };
  if (/^all$/i.test(trimmed)) return { layers: Array.from({ length: numLayers }, (_, layer) => layer) };
  const layers = new Set<number>();
  for (const part of trimmed.split(',')) {
    const piece = part.trim();
    const match = /^(\d+)\s*(?:(?:-|–|\.\.)\s*(\d+))?$/.exec(piece);
    if (match === null) return { problem: `"${piece}" is not a layer or a range; write 3, 0-3 or all.` };
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    if (to < from) return { problem: `${piece} runs backwards; write ${to}-${from}.` };
    if (to > last) return { problem: `layer ${to} does not exist: this model has layers 0–${last}.` };
    for (let layer = from; layer <= to; layer++) layers.add(layer);
  }
  return { layers: [...layers].sort((a, b) => a - b) };
}
