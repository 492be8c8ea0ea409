import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { probeExecutionProvider } from '../app/node/ort/execution-provider-probe.js';
import { parseRunRecord } from '../app/record/parse-run-record.js';
import { readPngText } from '../renderer/export/png-text.js';
import { PROJECT_ROOT, STORIES_DIR } from './environment.js';
import { expect, test } from './fixtures.js';

/**
 * The workbench tells the truth at a glance, on the real engine in serve mode with stories260k:
 * transformers' defaults refused before Run with the reason and a one-click fix; memory named plainly
 * (stored, fed to the model, kvscope's buffers, the process) with the direction of every ratio;
 * numbered heatmap scales in light and dark; per-token divergence marks live and after reopening;
 * exported PNGs that say what they show; only execution providers that really run offered; the
 * host's folders browsable for a model.
 */
test.describe('the workbench tells the truth at a glance', () => {
  test('transformers\' defaults on stories260k: refused before Run with the backend\'s message and the real lengths; one click on a fix runs it', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { model, run, live, page } = workbench;
    await model.openFolder(STORIES_DIR);
    await expect(model.name).toHaveText('stories260k');
    await run.setReference(true);
    // "Once upon a time" is 5 tokens with BOS; quanto groups H·S·D = 4·5·8 = 160 values, which 64 does not divide
    await expect(run.preflightStatus).toHaveText('Refused before Run at prefill (5 tokens): Run stays disabled until the settings change.');
    await expect(run.check('prompt-tokens')).toHaveText('5 tokens');
    await expect(run.check('context')).toHaveText('5 + 128 = 133 of 512 positions');
    await expect(run.refusalQuote).toHaveText('Group size (64) must be a divisor of (160)');
    await expect(run.runButton).toBeDisabled();
    await expect(workbench.runButton).toBeDisabled();
    await expect(run.blockedReason).toContainText('The run check refuses these settings');
    await expect(workbench.headerBlocked).toBeVisible();
    console.log(`[measure] run check on stories260k: ${await run.check('time').textContent()}`);
    const fixes = await run.fixes.allTextContents();
    expect(fixes).toEqual(expect.arrayContaining(['Use q_group_size 32', 'Pad the prompt to 6 tokens']));
    // transformers' defaults stay the defaults until a fix is clicked
    await expect(run.root.getByTestId('group-size-input')).toHaveValue('64');
    await workbench.screenshot('stories-defaults-refused');

    // typing changes the verdict at once: 6 tokens divide
    await run.setPrompt('Once upon a time there');
    await expect(run.check('prompt-tokens')).toHaveText('6 tokens');
    await expect(run.preflightStatus).toHaveText(/^OK: 5 of 5 layers quantized/);
    await run.setPrompt('Once upon a time');
    await expect(run.preflightStatus).toHaveText(/^Refused before Run/);

    await run.applyFix('Pad the prompt to 6 tokens');
    await expect(run.root.getByTestId('pad-prompt-input')).toHaveValue('6');
    await expect(run.check('prompt-tokens')).toHaveText('6 tokens');
    await expect(run.preflightStatus).toHaveText(/^OK: 5 of 5 layers quantized/);
    await run.setMaxNewTokens(64);
    await expect(run.runButton).toBeEnabled();
    // timed in the page: from the click to the first status that is not "Starting…" (reported, not asserted)
    const started = page.evaluate(() => new Promise<number>((resolve) => {
      const scope = globalThis as unknown as { document: { querySelector(selector: string): unknown }; performance: { now(): number }; MutationObserver: new (callback: () => void) => { observe(target: unknown, options: object): void; disconnect(): void } };
      const button = scope.document.querySelector('[data-testid="run-panel-run"]') as { addEventListener(type: string, listener: () => void, options: object): void };
      button.addEventListener('click', () => {
        const clicked = scope.performance.now();
        const observer = new scope.MutationObserver(() => {
          const status = scope.document.querySelector('[data-testid="run-status"]') as { textContent: string } | null;
          if (status !== null && /^(Generating…|Done)$/.test(status.textContent)) {
            observer.disconnect();
            resolve(scope.performance.now() - clicked);
          }
        });
        observer.observe(scope.document.querySelector('[data-testid="app"]'), { subtree: true, childList: true, characterData: true });
      }, { once: true, capture: true });
    }));
    await run.run();
    console.log(`[measure] Run → "Generating…" on stories260k with the warm worker: ${(await started).toFixed(0)} ms`);
    expect(await live.waitForEnd()).toBe('Done');
    await expect(live.stat('steps')).toHaveText('64');
    const savedRunId = (await live.savedRunId.textContent())!;
    const record = parseRunRecord(readFileSync(join(workbench.dataDir!, 'runs', `${savedRunId}.json`), 'utf8'), `${savedRunId}.json`);
    expect(record.settings.padPromptTo).toBe(6);
    expect(record.promptTokenIds).toHaveLength(6);
    expect(record.settings.quantization.groupSize).toBe(64);
  });

  test('memory named plainly: stored by component, fed to the model, kvscope\'s buffers and the process, every ratio with its direction', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { model, run, live } = workbench;
    await model.openFolder(STORIES_DIR);
    await run.setCache({ groupSize: 32, residualLength: 32 });
    await run.setMaxNewTokens(120);
    await run.run();
    expect(await live.waitForEnd()).toBe('Done');
    const record = parseRunRecord(readFileSync(join(workbench.dataDir!, 'runs', `${(await live.savedRunId.textContent())!}.json`), 'utf8'), 'record');
    const last = record.steps.at(-1)!;
    const sum = (pick: (layer: NonNullable<(typeof last.kvBytes)[number]>) => number): number => last.kvBytes.reduce((total, layer) => total + (layer === null ? 0 : pick(layer)), 0);
    await expect(live.stat('kv')).toHaveText(/KiB$/);
    await expect(live.statDetail('kv')).toHaveText(/^codes .+ · scale\/zero .+ · full precision .+$/);
    // stories260k's graph has float32 KV: the cache it replaces is an fp32 dynamic cache
    const stored = sum((l) => l.totalBytes);
    const fp32 = sum((l) => l.fp32BaselineBytes);
    await expect(live.stat('ratio')).toHaveText(`${(fp32 / stored).toPrecision(3)}× smaller`);
    await expect(live.statDetail('ratio')).toContainText('than the fp32 dynamic cache of the same tokens');
    await expect(live.stat('ratio-fp16')).toHaveText(/^\d+(\.\d+)?× (smaller|larger)$/);
    await expect(live.statDetail('ratio-fp16')).toContainText('than an fp16 dynamic cache');
    await expect(live.stat('fed')).toHaveText(/B$/);
    await expect(live.statDetail('fed')).toContainText('KV inputs of the last step');
    await expect(live.stat('working')).toHaveText(/B$/);
    await expect(live.stat('rss')).toHaveText(/MiB$/);
    await expect(live.statDetail('rss')).toHaveText(/V8 external .+ · array buffers .+/);
    expect(last.memory.rssBytes).toBeGreaterThan(0);
    const legend = await live.chartLegend('kv-memory');
    for (const name of ['codes', 'scale/zero', 'full precision', 'fed to the model (KV inputs)', 'kvscope buffers', 'fp32 dynamic cache (replaced)', 'fp16 dynamic cache', 'residual flush', 'RSS', 'V8 external', 'array buffers']) {
      expect(legend).toContain(name);
    }
    await expect.poll(() => live.chartPoints('kv-memory')).toBeGreaterThan(100);
    // nothing is cut at 1280 or 1920 px: every tile's value fits its box
    for (const width of [1280, 1920]) {
      await workbench.page.setViewportSize({ width, height: 900 });
      await workbench.page.waitForTimeout(300);
      const clipped = await workbench.page.getByTestId('stat-tiles').evaluate((tiles) => [...tiles.querySelectorAll('.stat-value, .stat-detail')]
        .filter((element) => element.scrollWidth > element.clientWidth + 1).map((element) => element.textContent));
      expect(clipped, `clipped at ${width} px`).toEqual([]);
      await workbench.screenshotResults(`memory-${width}`);
    }
  });

  test('heatmaps carry a numbered colour scale in light and dark, linear or log; tooltips name layer and step; PNG exports carry their title', async ({ openWorkbench }, testInfo) => {
    const workbench = await openWorkbench();
    const { model, run, live, page } = workbench;
    await model.openFolder(STORIES_DIR);
    await run.setCache({ backend: 'quanto', nbits: 2, groupSize: 32, residualLength: 16 });
    await run.setMaxNewTokens(100);
    await run.run();
    expect(await live.waitForEnd()).toBe('Done');
    const numbered = /^linear colour scale, relative error: 0 – \d\.\d\de-\d(; \d\.\d\de-\d – \d\.\d\de-\d)+$/;
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expect(page.getByTestId('app')).toHaveAttribute('data-color-scheme', scheme);
      await expect.poll(() => live.chartLegend('error-heatmap-key')).toMatch(numbered);
      await expect.poll(() => live.chartLegend('error-heatmap-value')).toMatch(numbered);
      await live.chart('error-heatmap-key').screenshot({ path: testInfo.outputPath(`heatmap-${scheme}.png`) });
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await live.setChartScale('error-heatmap-key', 'log');
    await expect.poll(() => live.chartLegend('error-heatmap-key')).toMatch(/^log colour scale, relative error: \d\.00e-\d – /);
    // the heatmap's columns are the quantize events by step: the prefill, then every 16th step
    const host = live.root.getByTestId('chart-error-heatmap-key');
    const box = (await host.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.2, box.y + box.height * 0.45);
    await expect(page.locator('div').filter({ hasText: /^layer \d \(full attention\) · (the prefill \(step 0\)|flush #\d+ at step \d+)/ }).first()).toBeVisible();

    const download = await live.exportChartPng('kv-memory');
    await download.saveAs(testInfo.outputPath('kv-memory-export.png'));
    const savedRunId = (await live.savedRunId.textContent())!;
    expect(download.suggestedFilename()).toBe(`${savedRunId}-kv-memory.png`);
    const text = readPngText(new Uint8Array(readFileSync((await download.path())!)));
    expect(text['Title']).toBe(`Memory over steps — run ${savedRunId}`);
    expect(text['Description']).toMatch(/^stories260k \(onnx\/model\.onnx\) · quanto 2-bit · axes 0\/0 · group 32 · residual 16 · all layers · cpu · dequantized in the graph · greedy/);
    expect(text['Software']).toMatch(/^kvscope /);
  });

  test('divergence marks per token, live and in a saved run reopened from the history', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { model, run, live, history } = workbench;
    await model.openFolder(STORIES_DIR);
    await run.setCache({ backend: 'quanto', nbits: 2, groupSize: 32, residualLength: 16 });
    await run.setReference(true);
    await run.setMaxNewTokens(200);
    await run.run();
    expect(await live.waitForEnd()).toBe('Done');
    const savedRunId = (await live.savedRunId.textContent())!;
    const record = parseRunRecord(readFileSync(join(workbench.dataDir!, 'runs', `${savedRunId}.json`), 'utf8'), 'record');
    const differing = record.steps.filter((step) => step.reference?.top1Agrees === false).map((step) => step.step);
    expect(differing.length, '2-bit quanto on stories260k should disagree with the reference somewhere').toBeGreaterThan(0);
    expect(record.steps.every((step) => step.text !== undefined)).toBe(true);
    await expect(live.divergenceMarks).toHaveCount(differing.length);
    expect(await live.text.textContent()).toBe(record.text);

    await history.show();
    const saved = await history.open(savedRunId);
    const marks = saved.getByTestId('generated-text').locator('span.disagree');
    await expect(marks).toHaveCount(differing.length);
    expect(await marks.evaluateAll((spans) => spans.map((span) => Number((span as unknown as { dataset: Record<string, string> }).dataset['step'])))).toEqual(differing);
    const first = record.steps[differing[0]!]!;
    await expect(marks.first()).toHaveAttribute('title', `step ${first.step}: the reference picks token ${first.reference!.referenceTokenId}, this run token ${first.tokenId}`);
    await expect(saved.getByTestId('text-differs')).toHaveText(`${differing.length} of ${record.reference!.steps} steps differ from the reference lane (marked).`);
    await workbench.screenshotResults('saved-run-divergence');
  });

  test('only execution providers that run here are offered: no WebGPU without an adapter, with the reason and the SwiftShader hint', async ({ openWorkbench }) => {
    // The serve host runs without Vulkan pointed anywhere (global-setup.ts); ask the machine the same question.
    const env = { ...process.env };
    delete env['VK_ICD_FILENAMES'];
    const probe = await probeExecutionProvider('webgpu', env);
    test.skip(probe.ok, 'this machine has a WebGPU adapter without SwiftShader: WebGPU is rightly offered');
    const workbench = await openWorkbench();
    const { run } = workbench;
    await expect(run.executionProvider('webgpu')).toBeDisabled();
    await expect(run.executionProvider('webgpu')).toHaveText('webgpu (unavailable)');
    await expect(run.executionProvider('cpu')).toBeEnabled();
    await run.root.getByText(/^Why .* unavailable$/).click();
    const reason = run.executionProviderReasons.locator('li').filter({ hasText: /^webgpu:/ });
    await expect(reason).toContainText('no adapter was found here');
    await expect(reason).toContainText('VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json');
    await workbench.screenshot('webgpu-not-offered');
  });

  test('Open… browses the host\'s folders; a config.json opens its model, as the CLI accepts it', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { folders, model } = workbench;
    await folders.open();
    await folders.place('File system root');
    await expect(folders.path).toHaveText('/');
    await folders.enter(...dirname(STORIES_DIR).split('/').filter(Boolean));
    await expect(folders.entry('stories260k')).toHaveAttribute('data-kind', 'model');
    await workbench.screenshot('folder-browser');
    await folders.enter('stories260k');
    await folders.openEntry('config.json');
    await expect(model.name).toHaveText('stories260k');
    // typed into the path field, a config.json is accepted too
    await model.openSynthetic('synthetic');
    await model.openFolder(join(STORIES_DIR, 'config.json'));
    await expect(model.name).toHaveText('stories260k');
  });

  test('Open… lists a huge folder in pages, saying how much it has listed, and lists the rest on request (issue 24)', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    test.skip(workbench.dataDir === null, 'needs the real host: the folder is made on its file system');
    // under the project (few entries above it), not /tmp, whose own listing may be long
    const huge = join(PROJECT_ROOT, 'test-results', `huge-folder-${process.pid}`);
    mkdirSync(huge, { recursive: true });
    try {
      for (let i = 0; i < 2100; i++) writeFileSync(join(huge, `graph_${i}.onnx`), '');
      const { folders } = workbench;
      await folders.open();
      await folders.place('File system root');
      await folders.enter(...huge.split('/').filter(Boolean));
      const progress = folders.root.getByTestId('folder-progress');
      await expect(progress).toContainText('Listed 2,000 of 2,100 entries.');
      await expect(folders.root.getByTestId('folder-entry')).toHaveCount(2000);
      await folders.root.getByTestId('folder-more').click();
      await expect(folders.root.getByTestId('folder-entry')).toHaveCount(2100);
      await expect(progress).toHaveCount(0);
      // in natural order across the pages: graph_2 before graph_10, the last one last
      await expect(folders.root.getByTestId('folder-entry').nth(2)).toHaveAttribute('data-name', 'graph_2.onnx');
      await expect(folders.root.getByTestId('folder-entry').last()).toHaveAttribute('data-name', 'graph_2099.onnx');
    } finally {
      rmSync(huge, { recursive: true, force: true });
    }
  });

  test('the what-if argues back: a context that is no length, a prompt longer than its context, positions past the model\'s, a refused configuration', async ({ openWorkbench }, testInfo) => {
    const workbench = await openWorkbench();
    const { model, run, page } = workbench;
    await model.openFolder(STORIES_DIR);
    const panel = page.getByTestId('what-if-panel');
    // the default context follows the model: stories260k has 512 positions
    await expect(panel.getByTestId('whatif-context-input')).toHaveValue('512');
    await run.setCache({ groupSize: 32 });
    await expect(panel.getByTestId('whatif-total')).toHaveText(/B$/);
    await panel.getByTestId('whatif-context-input').fill('-3');
    await expect(panel.getByTestId('whatif-problem')).toHaveText('Context length must be a whole number of tokens, at least 1; it is -3.');
    await expect(panel.getByTestId('whatif-total')).toHaveCount(0);
    await panel.getByTestId('whatif-context-input').fill('16');
    await expect(panel.getByTestId('whatif-problem')).toHaveText('The prompt (32 tokens) is longer than the context (16 tokens): a context holds the prompt and the tokens generated after it.');
    await panel.getByTestId('whatif-context-input').fill('100000');
    await expect(panel.getByTestId('whatif-warning')).toContainText("past this model's max_position_embeddings = 512");
    await expect(panel.getByTestId('whatif-total')).toHaveText(/MiB$/);
    await panel.getByTestId('whatif-prompt-input').fill('5');
    await run.setCache({ groupSize: 64 });
    await expect(panel.getByTestId('whatif-problem')).toContainText('These settings are refused at prefill (5 tokens), so the cache never holds 100000 tokens: Group size (64) must be a divisor of (160)');
    await expect(panel.getByTestId('whatif-total')).toHaveCount(0);
    await panel.screenshot({ path: testInfo.outputPath('what-if-refused.png') });
  });

  test('small things: Stop\'s key is named once, the fps counter shows only in performance mode, no internal document is cited', async ({ openWorkbench }) => {
    const workbench = await openWorkbench();
    const { page, run, model } = workbench;
    await expect(page.locator('kbd', { hasText: 'Esc' })).toHaveCount(1);
    await expect(page.locator('kbd', { hasText: /^\d$/ })).toHaveCount(0);
    await expect(page.getByTestId('fps')).toHaveCount(0);
    await page.getByTestId('performance-mode').click();
    await expect(page.getByTestId('fps')).toHaveText(/fps$/);
    await page.getByTestId('performance-mode').click();
    await expect(page.getByTestId('fps')).toHaveCount(0);
    // the refusals and findings of the check never cite "spec §…"
    await model.openFolder(STORIES_DIR);
    await run.setCache({ backend: 'hqq', nbits: 3, axisKey: 1, axisValue: 1 });
    await expect(run.preflightStatus).toHaveText(/^Refused before Run/);
    expect(await page.getByTestId('run-panel').textContent()).not.toContain('spec §');
    expect(await page.getByTestId('model-panel').textContent()).not.toContain('spec §');
  });
});
