import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { flushSchedule } from '../app/cache/flush-schedule.js';
import { parseRunRecord } from '../app/record/parse-run-record.js';
import { STORIES_DIR } from './environment.js';
import { expect, test } from './fixtures.js';

/** The transformers text the hybrid's refusal starts with (spec §1.2), verbatim. */
const HYBRID_VERDICT = "`QuantizedCache` is only supported for models with only full attention layers. We found the following invalid layer types: {'sliding_attention'}";

test.describe('workbench on the real engine', () => {
  test('opens the environment\'s default synthetic model on start', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { model } = workbench;
    await expect(model.name).toHaveText('synthetic');
    await expect(model.fact('layers')).toHaveText('8');
    await expect(model.fact('kv-heads')).toHaveText('4');
    await expect(model.fact('head-dim')).toHaveText('64');
    expect(await model.layers()).toEqual(Array(8).fill(['F', 'quantized', false]));
    // the defaults (residual 128, 128 new tokens) never flush: one warning says so
    await expect(workbench.run.preflightStatus).toHaveText('OK: 8 of 8 layers quantized, 1 warning.');
    await expect(workbench.run.root.getByTestId('check-note')).toContainText('This run never flushes');
    await workbench.screenshot('start-default-model');
  });

  test('flags the synthetic hybrid before any run, refuses the run, then runs full-attention layers only', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { model, run, live } = workbench;
    await model.openSynthetic('synthetic-hybrid');
    await expect(model.verdict).toBeVisible();
    await expect(model.verdictQuote).toHaveText(HYBRID_VERDICT);
    expect((await model.layers()).filter(([, , flagged]) => flagged).map(([letter]) => letter)).toEqual(['S', 'S', 'S', 'S']);
    await expect(run.preflightStatus).toHaveText(/^Refused before Run/);
    await workbench.screenshot('hybrid-flagged');

    // refused before Run: the button stays disabled with the reason, and the shortcut does not get around it
    await run.setMaxNewTokens(24);
    await expect(run.runButton).toBeDisabled();
    await expect(run.refusalQuote).toHaveText(HYBRID_VERDICT);
    await expect(run.refusal).toContainText('full-attention-only');
    await workbench.page.keyboard.press('Control+Enter');
    await expect(workbench.notices('error').getByTestId('notice-title')).toHaveText('This run is refused');
    await expect(workbench.notices('error').getByTestId('notice-error-message')).toContainText(HYBRID_VERDICT);
    await expect(live.root).toHaveCount(0);
    await workbench.screenshot('hybrid-refused');

    await model.chooseHandling('full-attention-only');
    expect((await model.layers()).map(([, plan]) => plan)).toEqual(
      ['full-precision', 'quantized', 'full-precision', 'quantized', 'full-precision', 'quantized', 'full-precision', 'quantized']);
    await expect(run.preflightStatus).toHaveText('OK: 4 of 8 layers quantized, 1 warning.');
    await run.run();
    expect(await live.waitForEnd()).toBe('Done');
    await expect(live.stat('steps')).toHaveText('24');
    await workbench.screenshotResults('hybrid-full-attention-only');
  });

  test('says clearly what is wrong with a folder that does not exist, and keeps working', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    await workbench.model.openFolder('/no/such/model/folder');
    await expect(workbench.model.error).toContainText('/no/such/model/folder does not exist');
    await expect(workbench.model.error).toContainText('What to do:');
    // a readable message, never a stack trace (`at f (file:1:2)` frames)
    expect(await workbench.model.error.textContent()).not.toMatch(/\bat \S+ \(?\S+:\d+:\d+/);
    await expect(workbench.runButton).toBeDisabled();
    await workbench.screenshot('bad-folder');
    await workbench.model.openSynthetic('synthetic');
    await expect(workbench.runButton).toBeEnabled();
  });

  test('stories260k, quantized with the reference lane: charts fill, flushes equal the saved record, text streams, exports work', async ({ openWorkbench }, testInfo) => {
    const electron = testInfo.project.name === 'electron';
    const workbench = await openWorkbench();
    const { model, run, live } = workbench;
    await model.openFolder(STORIES_DIR);
    await expect(model.name).toHaveText('stories260k');
    await expect(model.fact('layers')).toHaveText('5');
    await run.setCache({ backend: 'quanto', nbits: 4, groupSize: 32, residualLength: 32, layerPolicy: 'all' });
    await run.setMaxNewTokens(200);
    await run.setReference(true);
    await expect(run.preflightStatus).toHaveText('OK: 5 of 5 layers quantized.');
    await run.run();
    await live.waitForSteps(1);
    expect(await live.waitForEnd()).toBe('Done');
    await expect(live.stat('steps')).toHaveText('200');

    // every chart drew data: charts redraw at most every 300-500 ms, so the last draw may follow `Done`
    await expect.poll(() => live.chartPoints('kv-memory')).toBeGreaterThan(100);
    await expect.poll(() => live.chartPoints('error-heatmap-key')).toBeGreaterThan(0);
    await expect.poll(() => live.chartPoints('error-latest')).toBe(5);
    await expect.poll(() => live.chartPoints('reference')).toBeGreaterThan(100);
    await expect(live.text).not.toBeEmpty();

    const savedRunId = (await live.savedRunId.textContent())!;
    const streamedFlushes = Number(await live.stat('flushes').textContent());
    const record = parseRunRecord(readFileSync(join(workbench.dataDir!, 'runs', `${savedRunId}.json`), 'utf8'), `${savedRunId}.json`);
    if (!electron) {
      // Electron saves exports through a native dialog; the browser downloads them
      const download = await live.exportRun('json');
      expect(download.suggestedFilename()).toBe(`kvscope-run-${savedRunId}.json`);
      const exported = parseRunRecord(readFileSync((await download.path())!, 'utf8'), download.suggestedFilename());
      expect(exported.flushCounts).toEqual(record.flushCounts);
      expect(exported.steps).toHaveLength(200);
    }

    // The real number: transformers' flush rule for this prompt and 199 decode steps (spec §1.3),
    // what the engine recorded, what streamed into the charts, and what the result shows agree.
    const expected = flushSchedule(record.promptTokenIds.length, 32, 199, 1).flushSteps.length;
    expect(record.flushCounts).toEqual(Array(5).fill(expected));
    expect(streamedFlushes).toBe(expected);
    await expect(live.resultFlushes).toHaveText(String(expected));
    expect(await live.text.textContent()).toBe(record.text);
    expect(record.steps).toHaveLength(200);

    if (!electron) {
      const csv = await live.exportRun('csv');
      const lines = readFileSync((await csv.path())!, 'utf8').trim().split('\n');
      expect(lines).toHaveLength(201);
      expect(lines[0]).toMatch(/^step,token_id,seq_length,/);
      const png = await live.exportChartPng('kv-memory');
      expect(readFileSync((await png.path())!).subarray(1, 4).toString('latin1')).toBe('PNG');
    }
    await workbench.screenshotResults('stories260k-quantized-reference');
  });

  test('stops a run mid-way on Esc; the cancelled run is saved', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { run, live, history } = workbench;
    await run.setMaxNewTokens(4000);
    await run.setReference(false);
    await run.run();
    await live.waitForSteps(20);
    await workbench.page.keyboard.press('Escape');
    expect(await live.waitForEnd()).toBe('Cancelled');
    const steps = Number(await live.stat('steps').textContent());
    expect(steps).toBeGreaterThanOrEqual(20);
    expect(steps).toBeLessThan(4000);
    await expect(live.root.getByTestId('result-summary')).toContainText('cancelled');
    await workbench.screenshot('cancelled');
    await history.show();
    await expect(history.rows.first()).toContainText('cancelled');
  });

  test('history: opens a saved run, compares two side by side, deletes one', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { run, live, history } = workbench;
    const ids: string[] = [];
    for (const nbits of [4, 2]) {
      await run.setCache({ nbits, residualLength: 16 });
      await run.setMaxNewTokens(48);
      await run.run();
      expect(await live.waitForEnd()).toBe('Done');
      ids.push((await live.savedRunId.textContent())!);
    }
    await history.show();
    const saved = await history.open(ids[1]!);
    await expect.poll(async () => Number(await saved.getByTestId('chart-kv-memory').getAttribute('data-points'))).toBeGreaterThan(40);
    await expect(saved.getByTestId('stat-steps')).toHaveText('48');

    await history.show();
    const compare = await history.compare(ids[0]!, ids[1]!);
    await expect(compare.getByTestId('compare-table')).toContainText('quanto 4-bit');
    await expect(compare.getByTestId('compare-table')).toContainText('quanto 2-bit');
    await expect.poll(async () => Number(await compare.getByTestId('chart-compare-memory').getAttribute('data-points'))).toBeGreaterThan(40);
    await workbench.screenshotResults('compare-overlay');
    await compare.getByTestId('compare-layout-split').check({ force: true });
    await expect(compare.getByTestId('compare-split')).toBeVisible();

    await history.show();
    await history.delete(ids[0]!);
    await expect(history.row(ids[1]!)).toHaveCount(1);
  });

  test('history: a damaged record and a link in the runs folder show as damaged entries with the reason; export one, delete both', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    test.skip(workbench.dataDir === null, 'needs the host\'s data folder to put damaged files in');
    const { history } = workbench;
    const runs = join(workbench.dataDir!, 'runs');
    mkdirSync(runs, { recursive: true });
    const stamp = Date.now().toString(36);
    const cut = `e2e-cut-${stamp}`;
    const linked = `e2e-linked-${stamp}`;
    const secret = join(tmpdir(), `kvscope-e2e-secret-${stamp}`);
    writeFileSync(join(runs, `${cut}.json`), '{"format": "kvscope-run-record", "version": 1, "id": "e2e');
    writeFileSync(secret, 'root:TOP-SECRET:19000:0:99999:7:::\n');
    symlinkSync(secret, join(runs, `${linked}.json`));
    try {
      await history.show();
      await history.root.getByTestId('history-refresh').click();
      const cutRow = history.damagedRow(cut);
      await expect(cutRow.getByTestId('history-damaged-reason')).toContainText(`${cut}.json is not valid JSON`);
      await expect(cutRow.getByTestId('history-damaged-fix')).toContainText('Export the raw file');
      const linkRow = history.damagedRow(linked);
      await expect(linkRow.getByTestId('history-damaged-reason')).toContainText('is a symbolic link');
      await expect(linkRow.getByTestId('history-damaged-export')).toHaveCount(0);
      await expect(history.root).not.toContainText('TOP-SECRET');
      await workbench.screenshot('history-damaged');

      const download = workbench.page.waitForEvent('download');
      await cutRow.getByTestId('history-damaged-export').click();
      expect((await download).suggestedFilename()).toBe(`${cut}.json`);

      await history.deleteDamaged(cut);
      await history.deleteDamaged(linked);
      expect(existsSync(join(runs, `${cut}.json`))).toBe(false);
      expect(existsSync(secret)).toBe(true); // the link went, not the file it pointed to
    } finally {
      rmSync(join(runs, `${cut}.json`), { force: true });
      rmSync(join(runs, `${linked}.json`), { force: true });
      rmSync(secret, { force: true });
    }
  });
});
