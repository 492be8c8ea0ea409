import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseRunRecord } from '../app/record/parse-run-record.js';
import { STORIES_DIR } from './environment.js';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.js';

/**
 * Warm across changes (issue 25, point 8): the host keeps the sessions of recent settings, so going
 * back to bits run a moment ago reuses that session instead of loading the graph again. Asserted on
 * what the engine reports (the result's `sessionReused`), not on a time.
 */
test('back to 4-bit after a 2-bit run reuses the 4-bit session; the result and the record say so', async ({ openWorkbench }) => {
  const workbench = await openWorkbench();
  const { model, run, live, page } = workbench;
  await model.openFolder(STORIES_DIR);
  await expect(model.name).toHaveText('stories260k');
  await run.setCache({ backend: 'quanto', nbits: 4, groupSize: 32, residualLength: 16 });
  await run.setMaxNewTokens(24);
  const reused: string[] = [];
  for (const nbits of [4, 4, 2, 4] as const) {
    await run.setCache({ nbits });
    const statuses = statusesFromClick(page);
    await run.run();
    expect(await live.waitForEnd()).toBe('Done');
    // Run after changing bits shows "Generating…" (how soon is the warm bench's, `npm run bench -- warm`, not a test's)
    const seen = await statuses;
    expect(seen.texts, `run status after ${nbits}-bit`).toContain('Generating…');
    console.log(`[measure] ${nbits}-bit: Run → "Generating…" ${seen.generatingMs?.toFixed(0)} ms`);
    const session = page.getByTestId('result-session');
    await expect(session).toBeVisible();
    reused.push((await session.getAttribute('data-reused'))!);
    const id = (await live.savedRunId.textContent())!;
    const record = parseRunRecord(readFileSync(join(workbench.dataDir!, 'runs', `${id}.json`), 'utf8'), `${id}.json`);
    expect(String(record.timings.sessionReused)).toBe(reused.at(-1));
  }
  // The rerun reuses; back to 4-bit after the 2-bit run (a graph of its own) finds its session warm,
  // which one kept session could not give. Whether the 2-bit session was opened or kept depends on
  // what the suite's other specs ran on this server before (the host keeps recent sessions), so it is not asserted.
  expect([reused[1], reused[3]]).toEqual(['true', 'true']);
  await expect(page.getByTestId('result-session')).toContainText('warm');
  await workbench.screenshotResults('warm-session-reused');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expect(page.getByTestId('result-session')).toBeVisible();
  await expect(page.getByTestId('result-session')).toContainText('warm');
  await workbench.screenshotResults('warm-session-reused-dark');
});

/**
 * A change of backend (quanto → hqq) is a change the warm session must follow too: the run check
 * settles on the new backend (never left at "checking…"), and Run reaches "Generating…" and Done on
 * hqq. How soon is logged for the note, not asserted (a loaded machine would make it flaky).
 */
test('a change of backend from quanto to hqq: the run check settles and Run reaches "Generating…"', async ({ openWorkbench }) => {
  const workbench = await openWorkbench();
  const { model, run, live, page } = workbench;
  await model.openFolder(STORIES_DIR);
  await expect(model.name).toHaveText('stories260k');
  await run.setCache({ backend: 'quanto', nbits: 4, groupSize: 32, residualLength: 16 });
  await run.setMaxNewTokens(24);
  for (const backend of ['quanto', 'hqq'] as const) {
    await run.setCache({ backend });
    const check = page.getByTestId('preflight-panel');
    await expect(check, `run check after choosing ${backend}`).toHaveAttribute('data-stale', 'false');
    await expect(check.getByTestId('check-time')).toBeVisible();
    const statuses = statusesFromClick(page);
    await run.run();
    expect(await live.waitForEnd()).toBe('Done');
    const seen = await statuses;
    expect(seen.texts, `run status on ${backend}`).toContain('Generating…');
    console.log(`[measure] backend ${backend}: Run → "Generating…" ${seen.generatingMs?.toFixed(0)} ms`);
    const id = (await live.savedRunId.textContent())!;
    const record = parseRunRecord(readFileSync(join(workbench.dataDir!, 'runs', `${id}.json`), 'utf8'), `${id}.json`);
    expect(record.settings.quantization.backend).toBe(backend);
  }
});

/**
 * Every run status the header shows from the Run click until Done, watched in the page (a status
 * shown for a few milliseconds is still seen), with when "Generating…" came.
 */
function statusesFromClick(page: Page): Promise<{ texts: string[]; generatingMs: number | null }> {
  return page.evaluate(() => new Promise<{ texts: string[]; generatingMs: number | null }>((resolve) => {
    const scope = globalThis as unknown as { document: { querySelector(selector: string): unknown }; performance: { now(): number }; MutationObserver: new (callback: () => void) => { observe(target: unknown, options: object): void; disconnect(): void } };
    const button = scope.document.querySelector('[data-testid="run-panel-run"]') as { addEventListener(type: string, listener: () => void, options: object): void };
    button.addEventListener('click', () => {
      const clicked = scope.performance.now();
      const texts: string[] = [];
      let generatingMs: number | null = null;
      const observer = new scope.MutationObserver(() => {
        const status = scope.document.querySelector('[data-testid="run-status"]') as { textContent: string } | null;
        const text = status?.textContent ?? '';
        if (text !== texts.at(-1)) texts.push(text);
        if (text === 'Generating…' && generatingMs === null) generatingMs = scope.performance.now() - clicked;
        if (/^(Done|Cancelled|Failed)$/.test(text)) {
          observer.disconnect();
          resolve({ texts, generatingMs });
        }
      });
      observer.observe(scope.document.querySelector('[data-testid="app"]'), { subtree: true, childList: true, characterData: true });
    }, { once: true, capture: true });
  }));
}
