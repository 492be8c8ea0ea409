import type { ChartTheme } from '../charts/chart-theme.js';
import type { ChartIdentity } from './chart-png.js';

/** What a figure says about itself above the chart and in its metadata. */
export interface FigureHeader {
  readonly title: string;
  readonly identity: ChartIdentity;
  /** `kvscope 0.1.0` */
  readonly software: string;
}

const TITLE_SIZE = 14;
const LINE_SIZE = 11;
const PAD = 12;

/** Height of the header drawn above the chart: the title and two lines (run · model, settings). */
export function figureHeaderHeight(): number {
  return PAD + TITLE_SIZE + 2 * (LINE_SIZE + 4) + PAD / 2;
}

export function xmlEscape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/**
 * A chart's SVG (ECharts' SVG renderer) under a header with its title, run id, model and settings, as
 * the PNG export draws them (chart-png.ts), all vector text; `<title>` and `<desc>` carry the same for
 * whatever reads the file. The chart keeps its own coordinates inside a nested `<svg>`.
 */
export function figureSvg(chartSvg: string, width: number, height: number, header: FigureHeader, theme: ChartTheme): string {
  const top = figureHeaderHeight();
  const lines = [`run ${header.identity.runId} · ${header.identity.model}`, header.identity.settings];
  const inner = chartSvg.replace(/^<\?xml[^>]*>\s*/, '').replace(/^<svg\b/, `<svg x="0" y="${top}"`);
  const font = xmlEscape(theme.fontFamily);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="${width}" height="${top + height}" viewBox="0 0 ${width} ${top + height}">`,
    `<title>${xmlEscape(`${header.title} — run ${header.identity.runId}`)}</title>`,
    `<desc>${xmlEscape(`${header.identity.model} · ${header.identity.settings} · ${header.software}`)}</desc>`,
    `<rect x="0" y="0" width="${width}" height="${top + height}" fill="${xmlEscape(theme.background)}"/>`,
    `<text x="${PAD}" y="${PAD + TITLE_SIZE}" font-family="${font}" font-size="${TITLE_SIZE}" font-weight="bold" fill="${xmlEscape(theme.text)}">${xmlEscape(header.title)}</text>`,
    ...lines.map((line, i) => `<text x="${PAD}" y="${PAD + TITLE_SIZE + (i + 1) * (LINE_SIZE + 4)}" font-family="${font}" font-size="${LINE_SIZE}" fill="${xmlEscape(theme.muted)}">${xmlEscape(line)}</text>`),
    inner,
    '</svg>',
  ].join('\n');
}

/**
 * The figure as a vector PDF of the same size (points = CSS pixels), drawn by svg2pdf.js into a
 * jsPDF page; both load on the first PDF export, not with the window. The document's title, subject
 * and creator carry the header's words.
 */
export async function figurePdf(svg: string, width: number, height: number, header: FigureHeader): Promise<Uint8Array> {
  const [{ jsPDF }, { svg2pdf }] = await Promise.all([import('jspdf'), import('svg2pdf.js')]);
  const element = new DOMParser().parseFromString(svg, 'image/svg+xml').documentElement;
  if (element.nodeName !== 'svg') throw new Error('the chart\'s SVG could not be read back for the PDF export');
  // svg2pdf reads computed styles, so the figure is in the document while it draws, out of sight
  const holder = document.createElement('div');
  holder.style.cssText = 'position:fixed;left:-100000px;top:0;visibility:hidden';
  holder.append(element);
  document.body.append(holder);
  try {
    const doc = new jsPDF({ unit: 'pt', format: [width, height], orientation: width >= height ? 'landscape' : 'portrait', compress: true });
    doc.setProperties({ title: `${header.title} — run ${header.identity.runId}`, subject: `${header.identity.model} · ${header.identity.settings}`, creator: header.software });
    await svg2pdf(element as unknown as Element, doc, { x: 0, y: 0, width, height });
    return new Uint8Array(doc.output('arraybuffer'));
  } finally {
    holder.remove();
  }
}
