import { readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';
import type { DrawnSeries } from '../renderer/charts/drawn-series.js';
import { expect, test } from './fixtures.js';


const VALID_COLOR = /^(#[0-9a-f]{6}|rgba\(\d{1,3}, \d{1,3}, \d{1,3}, (0|1|0?\.\d+)\))$/;

function drawnSeries(page: Page): Promise<DrawnSeries[]> {
  return page.evaluate(() => (globalThis as unknown as { __kvscopeDrawnSeries(): DrawnSeries[] }).__kvscopeDrawnSeries());
}

/** Relative luminance of `#rrggbb` (WCAG 2), to tell a light figure from a dark one. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/** The charts that have not drawn a series yet. */
function missing(series: readonly DrawnSeries[], charts: readonly string[]): string[] {
  return charts.filter((chart) => !series.some((s) => s.chart === chart));
}

/**
 * Every series of every chart has a valid colour (no `#8e47NaN`), one no other series of its chart
 * shares, and a legend swatch; heatmaps' colour scales are valid too. Checked on the built bundle,
 * whose minified CSS writes `#fff` where the source says `#ffffff`.
 */
function expectHonestColours(series: readonly DrawnSeries[], charts: readonly string[]): void {
  for (const chart of charts) expect(series.some((s) => s.chart === chart), `chart ${chart} drew series`).toBe(true);
  const byChart = new Map<string, DrawnSeries[]>();
  for (const s of series) byChart.set(s.chart, [...(byChart.get(s.chart) ?? []), s]);
  for (const [chart, list] of byChart) {
    for (const s of list) {
      for (const color of s.visualMapColors) expect(color, `${chart}: visualMap colour`).toMatch(VALID_COLOR);
      if (s.type === 'heatmap') continue; // coloured by value: its visualMap was checked above
      if (s.drawnPoints === 0) continue; // draws nothing (a marker for layers this model lacks)
      expect(s.color, `${chart} · ${s.name}: colour`).toMatch(VALID_COLOR);
      expect(s.inLegend, `${chart} · ${s.name}: legend swatch`).toBe(true);
    }
    const painted = list.filter((s) => s.type !== 'heatmap' && s.drawnPoints > 0);
    const colors = painted.map((s) => s.color);
    expect(new Set(colors).size, `${chart}: distinct colours ${painted.map((s) => `${s.name}=${s.color}`).join(', ')}`).toBe(colors.length);
  }
}

test.describe('chart colours in the built UI', () => {
  test('every series of the run and compare charts has a valid, distinct colour and a legend swatch, light and dark', async ({ openWorkbench }) => {
    const workbench = await openWorkbench({ engine: 'fake' });
    const { page, run, live, history } = workbench;
    await page.emulateMedia({ colorScheme: 'light' });
    await run.setReference(true);
    await run.setMaxNewTokens(80);
    await run.run();
    expect(await live.waitForEnd()).toBe('Done');
    const first = (await live.savedRunId.textContent())!.trim();
    await run.setCache({ nbits: 2 });
    await run.run();
    expect(await live.waitForEnd()).toBe('Done');
    const second = (await live.savedRunId.textContent())!.trim();

    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expect(page.getByTestId('app')).toHaveAttribute('data-color-scheme', scheme);
      await page.getByTestId('tab-live').click();
      // The live view mounts its charts after the tab switch (some only once their panel is laid out): wait for them.
      const mounted = page.getByTestId('live-view').locator('[data-testid^="chart-"][_echarts_instance_]');
      await expect.poll(() => mounted.count()).toBeGreaterThanOrEqual(6);
      const liveCharts = await mounted.evaluateAll((els) => els.map((el) => el.getAttribute('data-testid')!));
      await expect.poll(async () => missing(await drawnSeries(page), liveCharts)).toEqual([]);
      expectHonestColours((await drawnSeries(page)).filter((s) => liveCharts.includes(s.chart)), liveCharts);
      await workbench.screenshotResults(`colours-live-${scheme}`);
      {
        // a run chart as a vector figure, in either scheme: SVG and PDF, titled with the chart, run id, model and settings
        const svgDownload = page.waitForEvent('download');
        await page.getByTestId('export-svg-kv-memory').click();
        const svgFile = await svgDownload;
        expect(svgFile.suggestedFilename()).toBe(`${second}-kv-memory.svg`);
        const svg = readFileSync((await svgFile.path())!, 'utf8');
        expect(svg).toContain(`>run ${second} · synthetic`);
        expect(svg).toMatch(/>quanto 2-bit · axes 0\/0 · group 64 · residual 128 · all layers · cpu · dequantized in the graph · greedy/);
        expect(svg).toContain('<title>');
        // well-formed XML (the browser's parser, as a vector editor or the PDF export reads it)
        expect(await page.evaluate((text) => new (globalThis as unknown as { DOMParser: new () => { parseFromString(t: string, m: string): { getElementsByTagName(n: string): { length: number } } } }).DOMParser()
          .parseFromString(text, 'image/svg+xml').getElementsByTagName('parsererror').length, svg)).toBe(0);
        expect(svg.match(/<path /g)!.length).toBeGreaterThan(10); // the chart's lines as vector paths
        // the figure keeps the scheme it was saved in: its page and its title contrast (dark text on light, light on dark)
        const page0 = /<rect x="0" y="0" width="[\d.]+" height="[\d.]+" fill="(#[0-9a-f]{6})"\/>/.exec(svg)?.[1];
        const title = /font-weight="bold" fill="(#[0-9a-f]{6})">Memory over steps</.exec(svg)?.[1];
        expect(page0, 'the figure\'s background').toBeDefined();
        expect(title, 'the figure\'s title colour').toBeDefined();
        expect(luminance(page0!) > luminance(title!), `background ${page0} against title ${title}`).toBe(scheme === 'light');
        const pdfDownload = page.waitForEvent('download');
        await page.getByTestId('export-pdf-kv-memory').click();
        const pdf = readFileSync((await (await pdfDownload).path())!);
        expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
        expect(pdf.length).toBeGreaterThan(5000);
      }

      await history.show();
      const compare = await history.compare(first, second);
      const compareMounted = compare.locator('[data-testid^="chart-compare-"][_echarts_instance_]');
      const mountedIds = () => compareMounted.evaluateAll((els) => els.map((el) => el.getAttribute('data-testid')!));
      await expect.poll(mountedIds).toEqual(expect.arrayContaining(['chart-compare-memory', 'chart-compare-layers', 'chart-compare-error', 'chart-compare-speed']));
      const compareCharts = await mountedIds();
      await expect.poll(async () => missing(await drawnSeries(page), compareCharts)).toEqual([]);
      const onCompare = (await drawnSeries(page)).filter((s) => compareCharts.includes(s.chart));
      expectHonestColours(onCompare, compareCharts);
      // V bars are their run's colour faded into the background, never the other run's
      const error = onCompare.filter((s) => s.chart === 'chart-compare-error');
      expect(error.map((s) => s.name)).toEqual(['K · run A', 'K · run B', 'V · run A', 'V · run B']);
      await workbench.screenshotResults(`colours-compare-${scheme}`);
    }
  });
});
