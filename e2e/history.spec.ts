import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.js';

interface DrawnSeries { readonly chart: string; readonly name: string; readonly color: string }

function drawnSeries(page: Page): Promise<DrawnSeries[]> {
  return page.evaluate(() => (globalThis as unknown as { __kvscopeDrawnSeries(): DrawnSeries[] }).__kvscopeDrawnSeries());
}

/** History as W&B's runs table: settings and figures as columns, sorted and filtered, 2 to 8 runs compared. */
test.describe('run history', () => {
  test('shows settings and figures as columns, sorts and filters them, keeps actions on screen at 1280 px, and compares three runs', async ({ openWorkbench }) => {
    const workbench = await openWorkbench({ engine: 'fake' });
    const { page, run, live, history } = workbench;
    await page.setViewportSize({ width: 1280, height: 800 });
    const ids: string[] = [];
    for (const nbits of [4, 2, 8]) {
      if (nbits === 8) await run.setCache({ backend: 'hqq', nbits, axisKey: 0, axisValue: 0 });
      else await run.setCache({ nbits });
      await run.setMaxNewTokens(60);
      await run.run();
      expect(await live.waitForEnd()).toBe('Done');
      ids.push((await live.savedRunId.textContent())!.trim());
    }
    await history.show();
    const headers = await history.root.locator('thead th').allTextContents();
    for (const label of ['Group', 'Residual', 'Axes K/V', 'Path', 'Bits/value', 'Mean KL', 'Top-1', 'tok/s']) expect(headers.join('|')).toContain(label);
    await expect(history.row(ids[0]!).getByTestId('history-path')).toHaveText('graph');
    await expect(history.row(ids[1]!).getByTestId('history-kl')).not.toHaveText('—');

    // sorted by bits per value, fewest first: 2-bit, 4-bit, 8-bit
    await history.root.getByTestId('history-sort-bits').click();
    const bits = (await history.rows.getByTestId('history-bits').allTextContents()).map(Number);
    expect(bits).toEqual([...bits].sort((a, b) => a - b));
    expect(await history.rows.evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run-id')))).toEqual([ids[1], ids[0], ids[2]]);
    await history.root.getByTestId('history-sort-bits').click();
    expect(await history.rows.evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run-id')))).toEqual([ids[2], ids[0], ids[1]]);

    // filtered by words from any column
    await history.root.getByTestId('history-filter').fill('hqq 8-bit');
    await expect(history.rows).toHaveCount(1);
    await expect(history.rows.first()).toHaveAttribute('data-run-id', ids[2]!);
    await history.root.getByTestId('history-filter').fill('');
    await expect(history.rows).toHaveCount(3);

    // every row's actions are on screen at 1280 px
    for (const id of ids) {
      for (const action of ['history-open', 'history-export-csv', 'history-delete']) {
        const box = await history.row(id).getByTestId(action).boundingBox();
        expect(box, `${action} of ${id}`).not.toBeNull();
        expect(box!.x + box!.width, `${action} of ${id} inside 1280 px`).toBeLessThanOrEqual(1280);
      }
    }
    // and every column shown is readable beside them: none ends under the pinned actions (light and dark)
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const width of [1280, 1920]) {
        await page.setViewportSize({ width, height: 800 });
        const actions = (await history.root.locator('thead th.actions-cell').boundingBox())!;
        const columns = await history.root.locator('thead th:not(.actions-cell)').evaluateAll((cells) => cells.map((cell) => {
          const box = cell.getBoundingClientRect();
          return { label: cell.textContent ?? '', right: box.right };
        }));
        for (const column of columns) expect(column.right, `${column.label} at ${width} px, ${scheme}`).toBeLessThanOrEqual(actions.x + 1);
        await workbench.screenshot(`history-${width}-${scheme}`);
      }
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    // the columns left out by default are a tick away
    await history.root.getByTestId('history-columns').locator('summary').click();
    await history.root.getByTestId('history-column-tokens').check();
    await expect(history.root.locator('thead th')).toContainText(['Tokens']);
    await expect(history.row(ids[0]!).getByTestId('history-tokens')).toHaveText('60');
    await history.root.getByTestId('history-column-tokens').uncheck();
    await history.root.getByTestId('history-columns').locator('summary').click();
    await page.emulateMedia({ colorScheme: 'light' });

    // three runs compared: a column each, a line each
    for (const id of ids) await history.row(id).getByTestId('history-compare-toggle').check();
    await expect(history.root.getByTestId('compare-button')).toHaveText('Compare 3 runs');
    await history.root.getByTestId('compare-button').click();
    const compare = page.getByTestId('compare-view');
    await expect(compare).toHaveAttribute('data-runs', '3');
    await expect(compare.getByTestId('compare-row-run').locator('td')).toHaveText(ids);
    await expect(compare.getByTestId('compare-row-path').locator('td')).toHaveText(['in the graph', 'in the graph', 'in the graph']);
    await expect.poll(async () => (await drawnSeries(page)).filter((s) => s.chart === 'chart-compare-speed').map((s) => s.name)).toEqual(['run A', 'run B', 'run C']);
    const speedColours = (await drawnSeries(page)).filter((s) => s.chart === 'chart-compare-speed').map((s) => s.color);
    expect(new Set(speedColours).size).toBe(3);
    const csv = await Promise.all([page.waitForEvent('download'), compare.getByTestId('compare-export-csv').click()]).then(([d]) => d.path());
    const { readFileSync } = await import('node:fs');
    const lines = readFileSync(csv, 'utf8').trim().split('\r\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^letter,run,model,cache,path,/);
    expect(lines[1]).toMatch(new RegExp(`^A,${ids[0]},`));
    const latex = await Promise.all([page.waitForEvent('download'), compare.getByTestId('compare-export-latex').click()]).then(([d]) => d.path());
    const tex = readFileSync(latex, 'utf8');
    expect(tex).toContain('\\toprule');
    expect(tex).toContain('\\bottomrule');
    for (const id of ids) expect(tex).toContain(id);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const width of [1280, 1920]) {
        await page.setViewportSize({ width, height: 900 });
        await workbench.screenshotResults(`compare-three-${width}-${scheme}`);
      }
    }
  });
});
