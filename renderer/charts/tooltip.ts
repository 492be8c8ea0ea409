import { significant } from '../format/units.js';

interface AxisParam {
  readonly seriesName?: string;
  readonly marker?: string;
  readonly value?: unknown;
  readonly axisValue?: unknown;
}

/**
 * Axis tooltip text: the step, then each series' value with its unit (STYLE.md §12). Built from
 * strings ECharts itself supplies (markers) and numbers, so nothing user-typed is inserted as HTML.
 */
export function stepTooltip(unit: () => string, digits = 3): (params: unknown) => string {
  return (params) => {
    const list = (Array.isArray(params) ? params : [params]) as AxisParam[];
    if (list.length === 0) return '';
    const first = list[0]!;
    const step = Array.isArray(first.value) ? first.value[0] : first.axisValue;
    const lines = list.map((p) => {
      const y = Array.isArray(p.value) ? p.value[1] : p.value;
      const text = typeof y === 'number' ? `${significant(y, digits)} ${unit()}` : '–';
      return `${p.marker ?? ''}${escapeHtml(p.seriesName ?? '')}: <b>${text}</b>`;
    });
    return [`step ${String(step)}`, ...lines].join('<br/>');
  };
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * Axis tooltip for charts whose series have different units (the memory chart's two panels): `unit`
 * names the unit of series `seriesIndex`; series without a value at the step are left out.
 */
export function stepTooltipByUnit(unit: (seriesIndex: number) => string, digits = 3): (params: unknown) => string {
  return (params) => {
    const list = (Array.isArray(params) ? params : [params]) as (AxisParam & { seriesIndex?: number })[];
    if (list.length === 0) return '';
    const first = list[0]!;
    const step = Array.isArray(first.value) ? first.value[0] : first.axisValue;
    const lines = list.flatMap((p) => {
      const y = Array.isArray(p.value) ? p.value[1] : p.value;
      if (typeof y !== 'number' || Number.isNaN(y)) return [];
      return [`${p.marker ?? ''}${escapeHtml(p.seriesName ?? '')}: <b>${significant(y, digits)} ${unit(p.seriesIndex ?? 0)}</b>`];
    });
    return [`step ${String(step)}`, ...lines].join('<br/>');
  };
}
