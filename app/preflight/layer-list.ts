/** `0-4, 6-10, 12`: layer indices as ascending runs, for messages. */
export function formatLayerList(indices: readonly number[]): string {
  const sorted = [...new Set(indices)].sort((a, b) => a - b);
  const runs: string[] = [];
  let start = 0;
  for (let i = 1; i <= sorted.length; i++) {
    if (i < sorted.length && sorted[i] === (sorted[i - 1] as number) + 1) continue;
    const first = sorted[start] as number;
    const last = sorted[i - 1] as number;
    runs.push(first === last ? String(first) : `${first}-${last}`);
    start = i;
  }
  return runs.join(', ');
}

/** `sliding_attention at 0-4, 6-10; conv at 0, 1` from per-layer kinds, in order of first appearance. */
export function describeKinds(entries: readonly { readonly index: number; readonly kind: string }[]): string {
  const byKind = new Map<string, number[]>();
  for (const { index, kind } of entries) {
    const list = byKind.get(kind) ?? [];
    list.push(index);
    byKind.set(kind, list);
  }
  return [...byKind].map(([kind, indices]) => `${kind} at ${formatLayerList(indices)}`).join('; ');
}
