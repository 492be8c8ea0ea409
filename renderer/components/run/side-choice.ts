import type { EntrySide } from '../../../app/cache/cache-extensions.js';
import type { SideChoice } from '../../../app/cache/layer-map-edit.js';

/**
 * A side's choice as a `<select>` value: `default`, `full`, `bits:4`, `format:llama.cpp:q8_0`
 * (a format name may hold colons; only the first one separates).
 */
export function sideChoiceValue(choice: SideChoice): string {
  if (choice === 'default') return 'default';
  if ('format' in choice) return `format:${choice.format}`;
  return choice.bits === 'full' ? 'full' : `bits:${choice.bits}`;
}

/** The choice a `<select>` value stands for; `keep` (a range edit leaving the side as it is) is null. */
export function sideChoiceOf(value: string): SideChoice | null {
  if (value === 'default') return 'default';
  if (value === 'full') return { bits: 'full' };
  if (value.startsWith('bits:')) return { bits: Number(value.slice('bits:'.length)) };
  if (value.startsWith('format:')) return { format: value.slice('format:'.length) };
  return null;
}

/** `4-bit`, `full`, `llama.cpp:q8_0`: a side in a few characters, for option labels and titles. */
export function sideLabel(side: EntrySide): string {
  if ('format' in side) return side.format;
  return side.bits === 'full' ? 'full' : `${side.bits}-bit`;
}
