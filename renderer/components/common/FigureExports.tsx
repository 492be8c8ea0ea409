import type { ReactNode } from 'react';
import type { ChartInstance, ChartOption } from '../../charts/echarts-core.js';
import { loadEcharts } from '../../charts/load-echarts.js';
import { figureHeaderHeight, figurePdf, figureSvg, type FigureHeader } from '../../export/chart-figure.js';
import { chartPng } from '../../export/chart-png.js';
import { downloadUrl } from '../../platform/download.js';
import { useChartTheme, useServices, useWorkbench } from '../../services.js';

interface FigureExportsProps {
  /** the chart on screen (null until it is drawn) */
  readonly chart: () => ChartInstance | null;
  readonly title: string;
  readonly identity: FigureHeader['identity'];
  /** the file name without extension */
  readonly fileStem: string;
  readonly disabled?: boolean;
  /** the id the buttons' test ids end with */
  readonly testId: string;
}

/**
 * A chart saved for a paper: PNG (raster, text chunks), SVG and PDF (vector: the chart drawn again by
 * ECharts' SVG renderer, under the same header of title, run id, model and settings; the PDF through
 * svg2pdf.js and jsPDF). Every chart of the workbench and the Lab offers the three.
 */
export function FigureExports({ chart, title, identity, fileStem, disabled = false, testId }: FigureExportsProps): ReactNode {
  const { store } = useServices();
  const theme = useChartTheme();
  const version = useWorkbench((s) => s.environment?.kvscopeVersion ?? null);
  const header: FigureHeader = { title, identity, software: `kvscope${version === null ? '' : ` ${version}`}` };

  const save = async (format: 'png' | 'svg' | 'pdf'): Promise<void> => {
    const instance = chart();
    if (instance === null) return;
    try {
      if (format === 'png') {
        const png = await chartPng(instance.getDataURL({ type: 'png', pixelRatio: 2, backgroundColor: theme.background }), title, identity, theme, header.software);
        saveBytes(`${fileStem}.png`, 'image/png', png);
        return;
      }
      const { renderOptionSvg } = await loadEcharts();
      const width = instance.getWidth();
      const height = instance.getHeight();
      const svg = figureSvg(renderOptionSvg(instance.getOption() as ChartOption, width, height), width, height, header, theme);
      if (format === 'svg') saveBytes(`${fileStem}.svg`, 'image/svg+xml', new TextEncoder().encode(svg));
      else saveBytes(`${fileStem}.pdf`, 'application/pdf', await figurePdf(svg, width, height + figureHeaderHeight(), header));
    } catch (error) {
      store.getState().pushNotice({ tone: 'error', title: `The chart could not be exported as ${format.toUpperCase()}`, error: { code: 'internal', message: (error as Error).message } });
    }
  };

  return (
    <span className="figure-exports">
      {(['png', 'svg', 'pdf'] as const).map((format) => (
        <button key={format} type="button" className="icon-button" onClick={() => void save(format)} disabled={disabled}
          title={`Save “${title}” as ${format.toUpperCase()}, titled with the run, model and settings${format === 'png' ? '' : ' (vector)'}`}
          aria-label={`Save ${title} as ${format.toUpperCase()}`} data-testid={`export-${format}-${testId}`}>
          {format.toUpperCase()}
        </button>
      ))}
    </span>
  );
}

function saveBytes(fileName: string, mimeType: string, bytes: Uint8Array): void {
  const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type: mimeType }));
  downloadUrl(fileName, url);
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
