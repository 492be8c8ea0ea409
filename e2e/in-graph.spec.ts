import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseRunRecord } from '../app/record/parse-run-record.js';
import { STORIES_DIR } from './environment.js';
import { expect, test } from './fixtures.js';
import { ExtensionsFields } from './pages/extensions-fields.js';

test.describe('where the cache is dequantized (run panel)', () => {
  test('stories260k on both paths: the saved record says which ran, the tokens are the same, the process-memory chart fills', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { model, run, live } = workbench;
    await model.openFolder(STORIES_DIR);
    await expect(model.name).toHaveText('stories260k');
    await run.setCache({ backend: 'quanto', nbits: 4, groupSize: 32, residualLength: 16, layerPolicy: 'all' });
    await run.setMaxNewTokens(48);
    await run.setReference(false);
    const records = [];
    for (const path of ['host', 'graph'] as const) {
      await run.setDequantize(path);
      await run.run();
      expect(await live.waitForEnd()).toBe('Done');
      await expect.poll(() => live.chartPoints('process-memory')).toBeGreaterThan(10);
      // the path that ran, in the header and the result, as the engine reported it
      await expect(workbench.page.getByTestId('live-path')).toHaveAttribute('data-path', path);
      await expect(workbench.page.getByTestId('live-path')).toHaveAttribute('data-ran', 'true');
      await expect(workbench.page.getByTestId('result-path')).toHaveAttribute('data-path', path);
      const id = (await live.savedRunId.textContent())!;
      records.push(parseRunRecord(readFileSync(join(workbench.dataDir!, 'runs', `${id}.json`), 'utf8'), `${id}.json`));
    }
    const [host, graph] = records;
    expect(host!.settings.dequantize).toBe('host');
    expect(host!.dequantize).toBe('host');
    expect(graph!.dequantize).toBe('graph');
    expect(graph!.generatedTokenIds).toEqual(host!.generatedTokenIds);
    expect(graph!.flushCounts).toEqual(host!.flushCounts);
    expect(graph!.diagnostics.some((d) => d.code === 'dequantize-path')).toBe(true);
    await workbench.screenshotResults('in-graph-process-memory');

    // History says which path each run took, and the saved view too
    await workbench.history.show();
    await expect(workbench.history.row(host!.id).getByTestId('history-path')).toHaveText('host');
    await expect(workbench.history.row(graph!.id).getByTestId('history-path')).toHaveText('graph');
    const saved = await workbench.history.open(host!.id);
    await expect(saved.getByTestId('saved-path')).toHaveAttribute('data-path', 'host');
  });

  test('an explicit "in the graph" that sinks rule out is refused before Run with the reason; the default runs on the host and says why', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { model, run, live, page } = workbench;
    await model.openFolder(STORIES_DIR);
    await expect(model.name).toHaveText('stories260k');
    await run.setCache({ backend: 'quanto', nbits: 4, groupSize: 32, residualLength: 16, layerPolicy: 'all' });
    await run.setMaxNewTokens(24);
    await run.setReference(false);
    const extensions = new ExtensionsFields(page);
    await extensions.open();
    await extensions.setSinkTokens(4);
    await run.setDequantize('graph');
    await expect(run.refusal).toContainText('--dequantize graph cannot run these settings: the in-graph path does not express the kvscope extension(s) attention sinks');
    await expect(run.runButton).toBeDisabled();
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expect(page.getByTestId('app')).toHaveAttribute('data-color-scheme', scheme);
      await expect(run.refusal).toBeVisible();
      await workbench.screenshot(`in-graph-refused-${scheme}`);
    }
    await run.setDequantize('default');
    await expect(run.runButton).toBeEnabled();
    await run.run();
    expect(await live.waitForEnd()).toBe('Done');
    const badge = page.getByTestId('live-path');
    await expect(badge).toHaveAttribute('data-path', 'host');
    await expect(badge).toHaveAttribute('data-ran', 'true');
    await expect(badge).toContainText('attention sinks');
    // the path that ran reads the same in the other scheme
    await page.emulateMedia({ colorScheme: 'light' });
    await expect(badge).toBeVisible();
    await expect(badge).toContainText('attention sinks');
    await workbench.screenshot('in-graph-host-path-light');
  });
});
